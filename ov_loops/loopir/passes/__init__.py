"""loopir/passes"""
