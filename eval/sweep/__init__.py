"""Component studies: every cell of a configuration grid as an ordinary FRAMES run directory, reported side by side."""
