"""report.html: a self-contained page (no server, no network) to browse one run's questions and traces, or to
compare runs side by side.

    from frames_agent.eval.frames.html import write_run_html, write_comparison_html, HTML_FILE
"""
from frames_agent.eval.frames.html.page import (
    HTML_FILE,
    RunPage,
    render,
    write_comparison_html,
    write_page,
    write_run_html,
)

__all__ = ["HTML_FILE", "RunPage", "render", "write_comparison_html", "write_page", "write_run_html"]
