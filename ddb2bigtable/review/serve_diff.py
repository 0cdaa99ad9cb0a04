"""What a change does to the stage's `serve` endpoint, for the pull request's reviewers.

Who may call it is what a reviewer must not miss: a change of signing, new invokers or a
wider ingress is flagged RISK (more callers reach the tables), and so is removing the
service (applications pointed at it stop working). Scale, size and image are plain changes.
"""

from __future__ import annotations

from ..plan.model import ServePlan
from .change import Change

SCOPE = "serve"
_INGRESS_WIDTH = {"internal": 0, "internal-and-cloud-load-balancing": 1, "all": 2}


def _figures(s: ServePlan) -> dict[str, str]:
    return {"where": s.where, "regions": ", ".join(s.regions), "image": s.image,
            "instances": f"{s.min_instances}-{s.max_instances}",
            "size": f"{s.cpu} vCPU, {s.memory}, {s.concurrency} requests at once"}


def serve_changes(old: ServePlan | None, new: ServePlan | None) -> list[Change]:
    if old is None and new is None:
        return []
    if old is None:
        assert new is not None
        return [Change(SCOPE, "endpoint added", "absent", f"{new.service} ({new.where}, signing {new.signing})",
                       None, new.why)]
    if new is None:
        return [Change(SCOPE, "endpoint removed", old.service, "removed", "RISK",
                       "applications using its endpoint_url stop working: point them elsewhere first")]
    out = [Change(SCOPE, what, a, b) for what, a in _figures(old).items() if (b := _figures(new)[what]) != a]
    if old.signing != new.signing:
        out.append(Change(SCOPE, "signing", old.signing, new.signing, "RISK",
                          "who may call the endpoint changes", "callers change"))
    added = sorted(set(new.invokers) - set(old.invokers))
    if added or set(old.invokers) - set(new.invokers):
        out.append(Change(SCOPE, "invokers", ", ".join(old.invokers) or "none", ", ".join(new.invokers) or "none",
                          "RISK" if added else None, f"roles/run.invoker granted to {', '.join(added)}" if added
                          else "fewer principals may call the endpoint"))
    if old.keys_secret != new.keys_secret:
        out.append(Change(SCOPE, "key secret", old.keys_secret or "none", new.keys_secret or "none", "RISK",
                          "the key pairs callers sign with change"))
    if old.ingress != new.ingress:
        wider = _INGRESS_WIDTH[new.ingress] > _INGRESS_WIDTH[old.ingress]
        out.append(Change(SCOPE, "ingress", old.ingress, new.ingress, "RISK" if wider else None,
                          "requests from more networks reach the endpoint" if wider else ""))
    return out
