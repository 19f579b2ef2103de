import Darkroom
import Foundation
import Hummingbird

/// Who may do what: a bearer token (`Authorization: Bearer T`, for scripts) or the gallery's
/// session cookie (set by the login form). A request without either gets 401 (a page: a
/// redirect to the login form); a read-only one that would change something, 403. A
/// cookie-authenticated request that changes something must carry the session's CSRF token
/// (header `X-CSRF-Token` or form field `csrf`), and an `Origin`, when sent, must be this
/// server's own. A request with a signature (`sig`, ``SignedAddresses``) is let in by it
/// alone, to read the one rendition it names; a wrong, foreign or expired one is 403.
struct AccessMiddleware: RouterMiddleware {
  let tokens: Tokens
  let sessions: Sessions
  let signing: SignedAddresses?
  static let cookieName = "darkroom_session"

  /// Paths anyone may fetch: the login form, health, the gallery's script and style, and a
  /// shared link's pages (``SharedRoutes`` opens each from its token).
  static func isPublic(_ path: String) -> Bool {
    path == "/login" || path == "/healthz" || path.hasPrefix("/static/") || path.hasPrefix("/s/")
  }

  static func changesState(_ method: HTTPRequest.Method) -> Bool {
    method != .get && method != .head && method != .options
  }

  func handle(
    _ request: Request, context: DarkroomRequestContext,
    next: (Request, DarkroomRequestContext) async throws -> Response
  ) async throws -> Response {
    var context = context
    var request = request
    let path = request.uri.path
    if let origin = request.headers[.origin], Self.changesState(request.method),
      !Self.sameOrigin(origin, request)
    {
      throw APIError(.forbidden, "forbidden", "a request from another site (Origin: \(origin))")
    }
    if Self.isPublic(path) { return try await next(request, context) }
    if SignedAddresses.isSigned(request) {
      do {
        guard let signing else {
          throw APIError(
            .forbidden, "signature",
            "this server takes no signed addresses (darkroom serve --signed-renditions)")
        }
        try signing.check(request)
        context.access = .read
        context.bySignature = true
        return try await next(request, context)
      } catch let error as APIError
        where error.kind == "signature" && SignedAddresses.isWellFormed(request)
      {
        // A page left open past its addresses' expiry (or a new key) still shows its
        // images to whoever is logged in; anyone else, or an address no server would hand
        // out, gets the signature's 403.
        let credentials =
          request.headers[.authorization] != nil
          || Self.cookie(Self.cookieName, in: request).flatMap { sessions.session($0) } != nil
        if !credentials { throw error }
      }
    }

    if let authorization = request.headers[.authorization] {
      guard authorization.hasPrefix("Bearer "),
        let access = tokens.access(String(authorization.dropFirst(7)))
      else {
        var error = APIError(
          .unauthorized, "unauthorized", "the token is not one this server knows")
        error.headers[.wwwAuthenticate] = "Bearer"
        throw error
      }
      context.access = access
    } else if let id = Self.cookie(Self.cookieName, in: request), let session = sessions.session(id)
    {
      context.access = session.access
      context.session = session
      if Self.changesState(request.method) {
        var sent = request.headers[.csrfToken]
        if sent == nil, request.headers[.contentType]?.hasPrefix(Self.formType) == true {
          let body = try await request.body.collect(upTo: 1 << 20)
          sent = Self.formFields(String(buffer: body))["csrf"]
          request.body = .init(buffer: body)
        }
        guard let sent, Secrets.equal(sent, session.csrfToken) else {
          throw APIError(.forbidden, "csrf", "the request lacks this session's CSRF token")
        }
      }
    } else {
      if !path.hasPrefix("/api/") && path != "/metrics" && request.method == .get {
        let next =
          path == "/"
          ? ""
          : "?next="
            + (request.uri.description.addingPercentEncoding(withAllowedCharacters: .alphanumerics)
              ?? "")
        return Response(status: .seeOther, headers: [.location: "/login" + next])
      }
      var error = APIError(
        .unauthorized, "unauthorized", "log in, or send Authorization: Bearer TOKEN")
      error.headers[.wwwAuthenticate] = "Bearer"
      throw error
    }
    // Logging out changes nothing in the library, but only a session has one to end: a
    // read-only bearer token's POST /logout is a write like any other.
    let endsOwnSession = path == "/logout" && context.session != nil
    if Self.needsWrite(request), !endsOwnSession, context.access != .write {
      throw APIError(.forbidden, "read-only", "this token may read, not change anything")
    }
    return try await next(request, context)
  }

  /// A request that changes something: any but GET and HEAD, except the POSTs that change
  /// nothing in the library (a zip of a selection, an editor's preview and Auto, unlocking or
  /// locking a space: a read-only session may look into a space). A session's logout is
  /// let through in `handle`.
  static func needsWrite(_ request: Request) -> Bool {
    let path = request.uri.path
    return changesState(request.method)
      && !(path == "/api/download" || SpaceRoutes.locksOrUnlocks(path)
        || ((path.hasPrefix("/api/assets/") || path.hasPrefix("/api/space/assets/"))
          && (path.hasSuffix("/preview") || path.hasSuffix("/auto"))))
  }

  static let formType = "application/x-www-form-urlencoded"

  static func sameOrigin(_ origin: String, _ request: Request) -> Bool {
    guard let host = request.head.authority else { return false }
    return origin == "http://\(host)" || origin == "https://\(host)"
  }

  static func cookie(_ name: String, in request: Request) -> String? {
    for header in request.headers[values: .cookie] {
      for part in header.split(separator: ";") {
        let pair = part.trimmingCharacters(in: .whitespaces).split(
          separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        if pair.count == 2, pair[0] == name { return String(pair[1]) }
      }
    }
    return nil
  }

  /// `a=1&b=x%20y` as a dictionary (the last of a repeated name wins).
  static func formFields(_ text: String) -> [String: String] {
    var fields: [String: String] = [:]
    for (name, value) in formPairs(text) { fields[name] = value }
    return fields
  }

  static func formPairs(_ text: String) -> [(String, String)] {
    text.split(separator: "&").compactMap { pair in
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard let name = FormQuery.decode(parts[0]) else { return nil }
      return (name, parts.count > 1 ? FormQuery.decode(parts[1]) ?? "" : "")
    }
  }
}
