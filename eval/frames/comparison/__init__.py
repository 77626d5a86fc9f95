"""Runs compared: paired tests of each run against the first (paired) and everything a comparison writes (tables)."""
