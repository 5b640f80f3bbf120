"""The layer types the validator looks into, importable without lxml: `save` asks whether an
IR has one before it imports the validator (an IR without has nothing to validate, and
importing lxml and the rules grew the process by 4.1 MiB)."""

from __future__ import annotations

LOOP_TYPES = ("Loop", "TensorIterator")
KEPT_TYPES = (*LOOP_TYPES, "If")  # layers whose XML (port_map, bodies, ports) the rules read
