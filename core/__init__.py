"""What every layer uses: the root error and its categories, paths and caches, the version, optional extras, text
made safe for a terminal, JSON and HTTP bounded for untrusted peers, and server sockets."""
