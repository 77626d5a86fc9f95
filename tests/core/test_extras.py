"""Optional packages: a missing one is named with the extra that installs it, before any work starts."""
from __future__ import annotations

import pytest

from frames_agent.core.errors import InstallError
from frames_agent.core.extras import install_hint, require_extras


def test_installed_modules_pass_and_missing_ones_name_their_extras():
    require_extras("the check", ["json"])
    with pytest.raises(InstallError) as caught:
        require_extras("the BM25 index", ["json", "no_such_module_here", "pyserini.no_such_part"])
    message = str(caught.value)
    assert "(no_such_module_here, pyserini.no_such_part)" in message and "frames-agent[all,lucene]" in message


def test_the_hint_names_the_extra_of_an_optional_top_level_module():
    assert "frames-agent[ray]" in install_hint("ray.util")
    assert install_hint("json") is None
