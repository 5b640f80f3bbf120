"""lower"""
