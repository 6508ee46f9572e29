"""One deployment, two code hosts: each repository key goes to its own host."""

from __future__ import annotations

from pydantic import SecretStr

from app.config import Settings
from app.forge.hosts import HostRouter, WrappedHost
from app.forge.protocol import RepoHost
from app.github.host import GitHubHost
from app.gitlab.host import GitLabHost
from app.gitlab.project import ProjectApi
from app.gitlab.records import instance_name


def test_each_repository_key_reaches_its_own_host(tmp_path: object) -> None:
    settings = Settings(
        gitlab_url="https://git.example.com",
        gitlab_token=SecretStr("glpat-0123456789"),
        github_api_url="https://ghe.example.com/api/v3",
    )
    github, gitlab = GitHubHost(settings), GitLabHost(settings)
    router = HostRouter(github, {instance_name(settings.gitlab_url): gitlab})
    assert router.host_of("acme/shop") is github
    assert router.host_of("git.example.com/acme/shop") is gitlab
    assert router.host_of("git.example.com/shop") is github  # one slash: GitHub's owner/name
    project = router.repository(15, "git.example.com/acme/sub/shop")
    assert isinstance(project, ProjectApi) and project.base == "/projects/15"
    assert router.pull_url("acme/shop", 3) == "https://ghe.example.com/acme/shop/pull/3"
    assert (
        router.pull_url("git.example.com/acme/shop", 3)
        == "https://git.example.com/acme/shop/-/merge_requests/3"
    )
    link = router.permalinks("git.example.com/acme/shop", "c" * 40)
    assert (
        link("a b.py", 2, 4) == f"https://git.example.com/acme/shop/-/blob/{'c' * 40}/a%20b.py#L2-4"
    )


def test_a_wrapped_host_wraps_its_repositories_and_passes_the_rest_on() -> None:
    settings = Settings(gitlab_url="https://git.example.com", gitlab_token=SecretStr("glpat-0123"))
    seen: list[object] = []

    def wrap(api: RepoHost) -> RepoHost:
        seen.append(api)
        return api

    wrapped = WrappedHost(GitLabHost(settings), wrap)
    project = wrapped.repository(15, "git.example.com/acme/shop")
    assert seen == [project] and isinstance(project, ProjectApi)
    assert wrapped.pull_url("git.example.com/acme/shop", 3).endswith("/-/merge_requests/3")
