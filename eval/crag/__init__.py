"""CRAG evaluation: rows and their pages, the runner (task 1: pages; task 2: pages + KG tools) and CRAG scoring."""
