"""A Mistral auth handler for deployments where one trusted caller (the
Pilotage gateway) sits in front of Mistral and names the tenant itself.

Mistral scopes every workflow, execution and action to the project of the
request context, but only when `[pecan] auth_enable = True`, and its only
handlers need Keystone or Keycloak. This handler trusts three headers
instead:

    X-Project-Id   the project (required; the gateway's tenant)
    X-User-Id      the user (optional)
    X-Roles        comma-separated roles (optional)

Mistral's own context hook then reads them as it reads what Keystone's
middleware would have set. The handler only decides whether a request may
pass: it rejects requests without a usable project and requests that carry
Mistral's "target cloud" headers (X-Target-*), which would replace the
project with one of their own.

Select it with `[DEFAULT] auth_type = trusted-header`. Whoever can reach the
API can claim any project, so Mistral must listen where only the gateway can
reach it (loopback, or a private network).
"""

import re

from mistral import auth
from mistral import exceptions as exc

# Mistral stores project ids in String(80) columns.
_PROJECT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,79}$")
_USER_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
_ROLE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


class TrustedHeaderAuthHandler(auth.AuthHandler):
    """Accepts a request when its headers name a well-formed project."""

    def authenticate(self, req):
        headers = req.headers
        project = headers.get("X-Project-Id", "").strip()
        if not project:
            raise exc.UnauthorizedException(
                "the X-Project-Id header is required"
            )
        if not _PROJECT_ID.match(project):
            raise exc.UnauthorizedException(
                "X-Project-Id must be 1-80 characters of letters, digits "
                "and . _ : @ - (starting with a letter or digit)"
            )
        user = headers.get("X-User-Id", "").strip()
        if user and not _USER_ID.match(user):
            raise exc.UnauthorizedException(
                "X-User-Id must be 1-128 characters of letters, digits "
                "and . _ : @ - (starting with a letter or digit)"
            )
        roles = [r.strip() for r in headers.get("X-Roles", "").split(",")]
        roles = [r for r in roles if r]
        bad = [r for r in roles if not _ROLE.match(r)]
        if bad:
            raise exc.UnauthorizedException(
                "X-Roles must be a comma-separated list of role names"
            )
        targets = sorted(h for h in headers.keys()
                         if h.lower().startswith("x-target-"))
        if targets:
            raise exc.UnauthorizedException(
                "%s not accepted: the project comes from X-Project-Id only"
                % ", ".join(targets)
            )
        # What Mistral's context hook reads, in the form Keystone's
        # middleware would leave it.
        req.headers["X-Project-Id"] = project
        req.headers["X-Roles"] = ",".join(roles)
        req.headers["X-Identity-Status"] = "Confirmed"
