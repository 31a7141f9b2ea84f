"""Error replies of the fake cloud, in Google's shapes.

Serves no API of its own: every API module raises ApiError (the JSON error
body of DESIGN GH.5: ``errors[]`` for the older Compute Engine and Cloud
Storage JSON APIs, ``details[]`` with google.rpc.ErrorInfo for the newer
ones) and the OAuth token endpoint raises OAuthError (RFC 6749 section
5.2).  HTML_404 is the page Google's front end answers for an unknown
path.
"""

STATUS_NAME = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED",
               403: "PERMISSION_DENIED", 404: "NOT_FOUND",
               409: "ALREADY_EXISTS", 412: "FAILED_PRECONDITION",
               429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL",
               501: "UNIMPLEMENTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE",
               504: "DEADLINE_EXCEEDED"}
REASON = {400: "invalid", 401: "authError", 403: "forbidden",
          404: "notFound", 409: "alreadyExists", 412: "conditionNotMet",
          429: "rateLimitExceeded", 500: "backendError", 502: "backendError",
          503: "backendError", 504: "backendError"}
RPC_CODE = {"OK": 0, "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3,
            "DEADLINE_EXCEEDED": 4, "NOT_FOUND": 5, "ALREADY_EXISTS": 6,
            "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8,
            "FAILED_PRECONDITION": 9, "ABORTED": 10, "INTERNAL": 13,
            "UNAVAILABLE": 14, "UNAUTHENTICATED": 16}
LEGACY_APIS = ("compute", "storage")   # errors[] style (H.5)


class ApiError(Exception):
    """An error reply in Google's shape (DESIGN GH.5)."""

    def __init__(self, code, message, reason=None, status=None,
                 details=None, headers=None, errors=None):
        Exception.__init__(self, message)
        self.code = code
        self.message = message
        self.reason = reason or REASON.get(code, "invalid")
        self.status = status or STATUS_NAME.get(code, "UNKNOWN")
        self.details = details
        self.headers = headers or {}
        self.errors = errors

    def body(self, api):
        e = {"code": self.code, "message": self.message,
             "status": self.status}
        if api in LEGACY_APIS or api is None:
            e["errors"] = self.errors or [{"message": self.message,
                                           "domain": "global",
                                           "reason": self.reason}]
        if self.details:
            e["details"] = self.details
        elif api not in LEGACY_APIS and api is not None:
            e["details"] = [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": self.status, "domain": "googleapis.com"}]
        return {"error": e}


class OAuthError(Exception):
    def __init__(self, code, error, description):
        Exception.__init__(self, description)
        self.code, self.error, self.description = code, error, description


def not_found(what):
    return ApiError(404, "The resource '%s' was not found" % what, "notFound")



HTML_404 = (b"<!DOCTYPE html>\n<html lang=en><meta charset=utf-8><title>"
            b"Error 404 (Not Found)!!1</title><p><b>404.</b> <ins>That's an "
            b"error.</ins><p>The requested URL was not found on this server."
            b" <ins>That's all we know.</ins></html>\n")
