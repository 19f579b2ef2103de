import Darkroom
import Foundation
import Hummingbird
import ServiceLifecycle

/// An encrypted space in the gallery (`/space`) and the API (`/api/space`), for a session
/// that unlocked it with its password (docs/spaces.md). The space's keys are held by the
/// session (``Sessions``), never written anywhere; originals are decrypted into memory and
/// rendered from there, renditions are cached in the space encrypted, and every response
/// says `Cache-Control: no-store`, so that a browser keeps no plaintext on its disk either.
struct SpaceRoutes: Sendable {
  /// The folder of spaces; nil when the server serves none (every route then answers 404).
  let folder: String?
  let sessions: Sessions
  let configuration: ServerConfiguration
  /// The API, whose asset routes a space's are (``API/assetRoutes(_:)``).
  let api: API
  let gallery: Gallery
  /// One unlock at a time: Argon2id takes a quarter of a gigabyte for half a second.
  let unlocking = Gate()
  /// Failed unlocks per session and per client address (``ServerConfiguration/failedUnlocks``:
  /// five, then one each 12 s). A session that has not failed is never refused: strangers
  /// failing from elsewhere (or from the owner's address) cannot lock the owner out. Guessing
  /// wants a gallery login, and goes one Argon2id at a time (``unlocking``).
  let sessionFailures: RateLimiter
  let addressFailures: RateLimiter

  init(
    folder: String?, sessions: Sessions, configuration: ServerConfiguration, api: API,
    gallery: Gallery
  ) {
    (self.folder, self.sessions, self.configuration) = (folder, sessions, configuration)
    (self.api, self.gallery) = (api, gallery)
    let limit = configuration.failedUnlocks
    sessionFailures = RateLimiter(rate: limit.perSecond, burst: limit.burst)
    addressFailures = RateLimiter(rate: limit.perSecond, burst: limit.burst)
  }

  /// The POSTs that lock or unlock, which a read-only session may make.
  static func locksOrUnlocks(_ path: String) -> Bool {
    ["/space/unlock", "/space/lock", "/api/space/unlock", "/api/space/lock"].contains(path)
  }

  func add(to router: Router<DarkroomRequestContext>) {
    router.addRoutes(pageRoutes(), atPath: "/space")
    router.addRoutes(apiRoutes(), atPath: "/api/space")
    router.addRoutes(api.assetRoutes(scope), atPath: "/api/space/assets")
  }

  /// The assets of the space the request's session unlocked, through the API's own asset
  /// routes.
  var scope: AssetScope {
    AssetScope(library: { context in try library(context) }, sealed: true)
  }

  /// The gallery's page of the space: shown, unlocked by its form, locked.
  func pageRoutes() -> API.Routes {
    let routes = API.Routes(context: DarkroomRequestContext.self)
    routes.get { _, context in try await page(context) }
    routes.get("asset/:id") { _, context in try await assetPage(context) }
    routes.post("unlock") { request, context in try await unlockPage(request, context) }
    routes.post("lock") { _, context in
      sessions.lock(try session(context).id)
      return Response(status: .seeOther, headers: [.location: "/space"])
    }
    return routes
  }

  /// The space through the API: its state, unlocked and locked, an upload into it. (Its
  /// assets are the API's asset routes: ``scope``.)
  func apiRoutes() -> API.Routes {
    let routes = API.Routes(context: DarkroomRequestContext.self)
    routes.get { _, context in try API.encode(state(context)) }
    routes.post("unlock") { request, context in try await unlockAPI(request, context) }
    routes.post("lock") { _, context in
      sessions.lock(try session(context).id)
      return try API.encode(state(context))  // (served, and locked now)
    }
    routes.post("uploads") { request, context in try await upload(request, context) }
    return routes
  }

  func state(_ context: DarkroomRequestContext) -> APISpaceState {
    APISpaceState(
      served: folder != nil,
      unlocked: context.session.map { sessions.space(for: $0.id) != nil } ?? false,
      idleSeconds: Int(configuration.spaceIdle.components.seconds))
  }

  /// The page's form: the password, a field of a form; a wrong one shows the page again.
  func unlockPage(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let body = try await request.body.collect(upTo: 64 << 10)
    var fields = AccessMiddleware.formFields(String(buffer: body))
    var password = Array((fields.removeValue(forKey: "password") ?? "").utf8)
    defer { Space.wipe(&password) }
    do {
      try await unlock(password, context)
    } catch let error as APIError where error.kind == "no-space" {
      return try await page(
        context, error: "No space opens with this password.", status: .forbidden)
    }
    return Response(status: .seeOther, headers: [.location: "/space"])
  }

  func unlockAPI(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let body = try await request.decode(as: UnlockBody.self, context: context)
    var password = Array(body.password.utf8)
    defer { Space.wipe(&password) }
    try await unlock(password, context)
    return try API.encode(APIAssets(space: try library(context)))
  }

  // MARK: Unlocking

  func session(_ context: DarkroomRequestContext) throws -> Session {
    guard folder != nil else {
      throw APIError.notFound("this server serves no spaces (darkroom serve --spaces DIR)")
    }
    guard let session = context.session else {
      throw APIError(
        .forbidden, "session-needed",
        "a space is unlocked for a gallery session: log in at /login (a bearer token has no session to hold its key)"
      )
    }
    return session
  }

  /// The library over the session's unlocked space.
  func library(_ context: DarkroomRequestContext) throws -> Library {
    let session = try session(context)
    guard let space = sessions.space(for: session.id) else { throw Self.locked }
    return Library(space: space)
  }

  static let locked = APIError(.forbidden, "locked", "the space is locked: unlock it first")

  /// Opens the space `password` opens for the session, one unlock at a time.
  ///
  /// - Throws: 403 `no-space` with exactly "no space opens with this password"; 429 after
  ///   too many failures; 503 while another unlock runs.
  func unlock(_ password: [UInt8], _ context: DarkroomRequestContext) async throws {
    let session = try session(context)
    guard let folder else { return }
    guard !password.isEmpty else { throw APIError.badRequest("the password is empty") }
    guard unlocking.enter() else {
      var error = APIError(.serviceUnavailable, "busy", "another space is being unlocked: retry")
      error.headers[.retryAfter] = "1"
      throw error
    }
    defer { unlocking.leave() }
    // A session that failed lately, past either limit: no password is tried, the right one
    // included, 429 whatever was sent.
    if sessionFailures.hasTaken(session.id),
      let wait = sessionFailures.wait(session.id) ?? addressFailures.wait(context.client)
    {
      var error = APIError(
        .tooManyRequests, "rate-limited", "too many failed unlocks: wait a minute")
      error.headers[.retryAfter] = String(wait)
      throw error
    }
    let space: Space
    do {
      space = try await blocking { () throws(DarkroomError) in
        try Space.open(folder, password: password)
      }
    } catch let error as DarkroomError where error.kind == .invalidArgument {
      sessionFailures.take(session.id)
      addressFailures.take(context.client)
      throw APIError(.forbidden, "no-space", "no space opens with this password")
    }
    sessions.unlock(space, for: session.id)
  }

  // MARK: Pages

  func page(
    _ context: DarkroomRequestContext, error: String? = nil, status: HTTPResponse.Status = .ok
  ) async throws -> Response {
    guard folder != nil else {
      throw APIError.notFound("this server serves no spaces (darkroom serve --spaces DIR)")
    }
    var values = gallery.common(context, title: "Encrypted space")
    values["error"] = error
    values["idleMinutes"] = max(1, Int(configuration.spaceIdle.components.seconds) / 60)
    if let session = context.session, let space = sessions.space(for: session.id) {
      let assets = try APIAssets(space: Library(space: space)).assets
      values["unlocked"] = true
      values["count"] = Gallery.items(assets.count)
      values["assets"] = assets.map { asset -> [String: Any] in
        var values: [String: Any] = [
          "id": asset.id, "name": asset.name, "version": asset.editVersion,
        ]
        if let duration = asset.duration { values["length"] = Gallery.length(duration) }
        return values
      }
    } else {
      values["locked"] = true
      values["canUnlock"] = context.session != nil
    }
    return gallery.page("space", values, status: status)
  }

  /// A photo or video of the unlocked space on its own page, with the gallery's editor over
  /// the space's asset routes: the library's asset page, less what a space keeps not (stars,
  /// favourites; it keeps no place either). A locked space sends the browser to its unlock
  /// form.
  func assetPage(_ context: DarkroomRequestContext) async throws -> Response {
    guard let session = context.session, sessions.space(for: session.id) != nil else {
      _ = try self.session(context)  // (404 without spaces; 403 without a session)
      return Response(status: .seeOther, headers: [.location: "/space"])
    }
    return try await gallery.shown(context) {
      let library = try library(context)
      let id = try API.assetID(context)
      let (asset, previous, next) = try await blocking { () throws(DarkroomError) in
        let asset = try library.asset(id)
        let (previous, next) = try library.neighbours(of: id, in: AssetQuery())
        return (asset, previous, next)
      }
      var values = gallery.assetValues(asset, context, api: "/api/space/assets")
      values["space"] = true
      // (A page's title is kept in the browser's history on its disk, whatever no-store says:
      // the photo's name stays in the page.)
      values["title"] = "Encrypted space"
      // (Its renditions are never cached: the edit's number names them well enough, and
      // the content's keyed hash is not shown.)
      values["version"] = String(asset.adjustmentVersion)
      values["back"] = "/space"
      values["previous"] = previous.map { "/space/asset/\($0.rawValue)" }
      values["next"] = next.map { "/space/asset/\($0.rawValue)" }
      return gallery.page("asset", values)
    }
  }

  // MARK: Uploads

  /// `POST /api/space/uploads?name=N`: the body encrypted into the space as it arrives
  /// (never in a temporary file; never whole in memory, but for one sent without
  /// `Content-Length`, held up to the upload limit first).
  func upload(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let (asset, added) = try await API.add(
      request, to: try library(context), into: nil, configuration)
    return try API.encode(
      APISpaceUpload(status: added ? "added" : "duplicate", asset: APISpaceAsset(asset)),
      status: added ? .created : .ok)
  }
}

/// Locks every unlocked space when the server stops. (An idle space locks itself:
/// ``Sessions/unlock(_:for:)``.)
struct SpaceLockService: Service {
  let sessions: Sessions

  func run() async throws {
    try? await gracefulShutdown()
    sessions.lockAll()
  }
}

/// One at a time, without waiting: `enter` fails while another holds it.
final class Gate: Sendable {
  private let busy = Locked(false)

  func enter() -> Bool {
    busy.withLock { busy in
      defer { busy = true }
      return !busy
    }
  }

  func leave() { busy.withLock { $0 = false } }
}

// MARK: Bodies

struct UnlockBody: Decodable {
  var password: String
}

struct APISpaceState: Encodable {
  var served: Bool
  var unlocked: Bool
  var idleSeconds: Int
}

/// An asset of a space as the API shows it: never its objects' names or its keyed identity.
struct APISpaceAsset: Encodable {
  var id: String
  var name: String
  var added: Double
  var format: String
  var width: Int
  var height: Int
  var byteSize: Int
  var editVersion: Int
  var trashed: Bool
  /// Where a motion photo's video is in the original; absent for a still alone.
  var motionVideo: FileRange?
  /// `photo` or `video`.
  var mediaType: String
  /// A video's length in seconds; absent for a photo.
  var duration: Double?

  init(_ asset: Asset) {
    id = asset.id.rawValue
    name = asset.name
    added = asset.addedAt
    format = asset.format
    width = asset.displayWidth
    height = asset.displayHeight
    byteSize = Int(asset.byteSize)
    editVersion = asset.adjustmentVersion
    trashed = asset.trashedAt != nil
    motionVideo = asset.motionVideo
    mediaType = asset.mediaType.rawValue
    duration = asset.duration
  }
}

extension APIAssets where Item == APISpaceAsset {
  /// Every asset of a space out of its trash, oldest first: what `GET /api/space/assets`
  /// lists without a limit, as an unlock answers it and the space's page shows it.
  init(space library: Library) throws(DarkroomError) {
    let page = try library.page(of: AssetQuery(), limit: API.wholeSpace)
    self.init(assets: page.assets.map(APISpaceAsset.init), count: page.count, next: nil)
  }
}

struct APISpaceUpload: Encodable {
  var status: String
  var asset: APISpaceAsset
}
