"""Loops: the backend-neutral LoopSpec and the translators to and from it."""
