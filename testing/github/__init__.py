"""A loopback GitHub for tests and for running the workflows under act: REST, uploads, git over
smart HTTP, the Actions cache service and Pages, over HTTPS with a throwaway CA (docs/ghserver.md).
"""

from testing.github.server import LoopbackGitHub

__all__ = ["LoopbackGitHub"]
