"""Where a Ray run's cluster comes from: one started here lives in this user's own temporary directory."""
from __future__ import annotations

from frames_agent.eval.frames.executors import RayCluster, ray_temp_dir


class FakeRay:
    """ray's is_initialized and init, recording what init was asked."""

    def __init__(self) -> None:
        self.asked: list[dict] = []

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs) -> None:
        self.asked.append(kwargs)


def test_a_local_cluster_is_started_in_our_own_temporary_directory_on_loopback(monkeypatch, tmp_path):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    ray = FakeRay()
    assert RayCluster()._connect(ray) == "local"
    [asked] = ray.asked
    # address None would join whichever cluster /tmp/ray/ray_current_cluster names, another user's too.
    assert asked["address"] == "local" and asked["_node_ip_address"] == "127.0.0.1"
    assert asked["_temp_dir"] == str(ray_temp_dir()) and asked["_temp_dir"].startswith(str(tmp_path))


def test_a_named_cluster_is_joined_as_named(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    ray = FakeRay()
    assert RayCluster(address="10.0.0.5:6379")._connect(ray) == "joined"  # its tasks are cancelled on interrupt
    assert ray.asked[0]["address"] == "10.0.0.5:6379" and "_temp_dir" not in ray.asked[0]
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.6:6379")
    assert RayCluster()._connect(ray) == "joined"
    assert ray.asked[1]["address"] is None and "_temp_dir" not in ray.asked[1]  # Ray reads $RAY_ADDRESS itself
