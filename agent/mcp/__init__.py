"""MCP: the agent as a Model Context Protocol server (tools frames_research and search_wikipedia) on the official
`mcp` SDK; `python cli.py mcp` serves it over stdio."""
