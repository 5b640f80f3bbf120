"""Limits of OpenVINO's plugins that both the passes and the lowerings respect (measured on
OpenVINO 2026.4.1)."""

from __future__ import annotations

# The CPU plugin (2026.4.1) dies with SIGFPE (in compile_model, or in the first inference when
# dims are dynamic) on a Loop with any input or output port of static rank 13 or more, whatever
# the port's kind, the trip count or the nesting depth. Values inside the body may have any rank.
MAX_PORT_RANK = 12
