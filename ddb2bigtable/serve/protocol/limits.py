"""What serve exposes and the limits it holds connections to (connections.py applies them,
signatures.py checks the scope), apart so the command line reads their defaults without
importing the server."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Guard:
    """How long a request may take to arrive, how long a connection may idle between
    requests, and how many connections a worker keeps open (docs/serve.md, the options)."""

    header_seconds: float = 10.0  # a request's line and headers: a few hundred bytes
    body_seconds: float = 60.0  # 16 MB (DynamoDB's largest request) needs 2.2 Mbit/s to arrive in time
    # Above the 60 s idle timeout of AWS's Application Load Balancer (AWS, "Application Load Balancers",
    # connection idle timeout, read 2026-11-29), so a proxy in front closes an idle connection
    # first and never reuses one serve just closed; behind Google's external Application Load
    # Balancer, whose backend keepalive is 600 s (Google, "Request distribution for external
    # Application Load Balancers", read 2026-11-29), give --idle-timeout 620.
    idle_seconds: int = 75
    max_connections: int = 1000


@dataclass(frozen=True)
class Exposure:
    """How the endpoint faces its clients: the AWS regions and Host values a signature may be
    scoped to (signatures.answering_hosts), and the connection limits."""

    regions: frozenset[str] = frozenset()
    hosts: frozenset[str] = frozenset()
    guard: Guard = field(default_factory=Guard)
