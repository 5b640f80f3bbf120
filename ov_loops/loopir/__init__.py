"""loopir"""
