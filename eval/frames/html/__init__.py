"""report.html: a self-contained page (no server, no network) of one run's questions and traces, or of runs compared."""
