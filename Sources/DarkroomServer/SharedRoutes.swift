import Darkroom
import Foundation
import HTTPTypes
import Hummingbird

/// What a visitor with a shared link sees, at `/s/TOKEN`: the album's photos, one photo at a
/// time, its images, and (when the link allows) the originals; nothing else. Every request
/// opens the link again from its token (revoked or expired: 404), asks for the password's
/// pass when the link has one, and reaches an asset only through ``Library/sharedAsset(_:of:)``.
/// The pages run no script and carry `noindex`; the referrer goes to this server alone
/// (`same-origin`), so the token does not leave it.
struct SharedRoutes {
  let library: Library
  let images: Images
  let gallery: Gallery
  /// Wrong passwords, per client and per link (as failed logins: five a minute).
  let passwords: RateLimiter
  static let cookie = "darkroom_share"
  static let pageSize = 200
  /// The largest images a visitor gets: a thumbnail's side, and a screen's (the original,
  /// only when downloads are allowed).
  static let largestThumbnail = 512
  static let largestScreen = 2048

  init(
    library: Library, images: Images, gallery: Gallery,
    failedPasswords: (burst: Double, perSecond: Double)
  ) {
    (self.library, self.images, self.gallery) = (library, images, gallery)
    passwords = RateLimiter(rate: failedPasswords.perSecond, burst: failedPasswords.burst)
  }

  func add(to router: Router<DarkroomRequestContext>) {
    router.get("s/:token") { request, context in
      // A visit: the album's first page opened (not a HEAD: a link preview, a mail scanner).
      let visit = request.query["after"] == nil && request.method == .get
      return try await page(request, context, visit: visit) { link, token in
        try await album(link, token, request)
      }
    }
    router.post("s/:token") { request, context in
      try await asPage { try await password(request, context) }
    }
    router.get("s/:token/photo/:id") { request, context in
      try await page(request, context) { link, token in
        try await photo(link, token, try API.assetID(context))
      }
    }
    router.get("s/:token/assets/:id/:rep") { request, context in
      try await image(request, context)
    }
  }

  // MARK: Opening the link

  /// The link the address's token opens, and whether the visitor may see it (no password,
  /// or the pass of one).
  func open(_ request: Request, _ context: DarkroomRequestContext, visit: Bool = false)
    async throws -> (link: SharedLink, token: String, admitted: Bool)
  {
    let token = context.parameters.get("token") ?? ""
    let link = try await blocking { [library] () throws(DarkroomError) in
      try library.sharedLink(token: token, visit: visit)
    }
    guard let pass = link.pass(token: token) else { return (link, token, true) }
    let sent = AccessMiddleware.cookie(Self.cookie, in: request) ?? ""
    return (link, token, Secrets.equal(sent, pass))
  }

  /// A page of the link: its password's form until it is given; errors as pages.
  func page(
    _ request: Request, _ context: DarkroomRequestContext, visit: Bool = false,
    _ body: (SharedLink, String) async throws -> Response
  ) async throws -> Response {
    try await asPage {
      let (link, token, admitted) = try await open(request, context, visit: visit)
      guard admitted else { return render(["askPassword": true], link: link, token: token) }
      return try await body(link, token)
    }
  }

  /// A request's mistake (a link that opens nothing, a bad address) as a page that says so;
  /// the server's own failures go on to the error middleware.
  func asPage(_ body: () async throws -> Response) async throws -> Response {
    do {
      return try await body()
    } catch {
      let translated =
        (error as? APIError)
        ?? (error as? DarkroomError).map { ErrorMiddleware.translate($0, library: library) }
      guard let translated, translated.status.code < 500 else { throw error }
      // A missing link or photo in the engine's words; anything else in none of its own (a
      // damaged photo's path inside the library is not the visitor's business).
      let found = [.notFound, .badRequest, .tooManyRequests].contains(translated.status)
      let text = found ? translated.message : "this page of the shared album cannot be shown"
      let message = text.prefix(1).uppercased() + text.dropFirst()
      var response = render(
        [
          "title": translated.status == .notFound ? "Not found" : "Cannot show this",
          "message": message + ".",
        ], link: nil, token: nil, status: translated.status)
      for field in translated.headers { response.headers[field.name] = field.value }
      return response
    }
  }

  /// The password's form, posted: a pass (a cookie for this link's address) when it is the
  /// link's, the form again (401) when not.
  func password(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let (link, token, _) = try await open(request, context)
    guard let pass = link.pass(token: token) else {
      return Response(status: .seeOther, headers: [.location: "/s/" + token])
    }
    // Past the limit (by this client, or at this link from anywhere) no password is
    // checked, the right one included: each check is an Argon2id's worth of memory and time.
    let keys = [context.client, "link " + link.id]
    if let wait = keys.compactMap({ passwords.wait($0) }).max() {
      var error = APIError(
        .tooManyRequests, "rate-limited", "too many wrong passwords: wait a minute")
      error.headers[.retryAfter] = String(wait)
      throw error
    }
    let body = try await request.body.collect(upTo: 16 << 10)
    let given = AccessMiddleware.formFields(String(buffer: body))["password"] ?? ""
    let accepted = try await blocking { [library] () throws(DarkroomError) in
      library.sharedLink(link, accepts: given)
    }
    guard accepted else {
      for key in keys { passwords.take(key) }
      return render(
        ["askPassword": true, "wrong": true], link: link, token: token, status: .unauthorized)
    }
    return Response(
      status: .seeOther,
      headers: [
        .location: "/s/" + token,
        .setCookie:
          "\(Self.cookie)=\(pass); Path=/s/\(token); HttpOnly; SameSite=Lax; Max-Age=86400"
          + (request.headers[.forwardedProto] == "https" ? "; Secure" : ""),
      ])
  }

  // MARK: Pages

  func album(_ link: SharedLink, _ token: String, _ request: Request) async throws -> Response {
    var query = try await blocking { [library] () throws(DarkroomError) in
      try library.sharedQuery(link)
    }
    if let after = request.query["after"] {
      guard let id = AssetID(String(after)) else {
        throw APIError.badRequest("after takes an asset id; not \(after.prefix(40))")
      }
      // Only after one of the album's own (another id's date is not the visitor's to learn).
      _ = try await blocking { [library] () throws(DarkroomError) in
        try library.sharedAsset(id, of: link)
      }
      query.after = id
    }
    let asked = query
    let (page, count) = try await blocking { [library] () throws(DarkroomError) in
      let page = try library.page(of: asked, limit: Self.pageSize)
      var whole = asked
      whole.after = nil
      if let count = page.count { return (page, count) }
      return (page, try library.count(matching: whole))
    }
    let base = "/s/" + token
    var values: [String: Any] = [
      "grid": true,
      "summary": Gallery.items(count),
      "assets": page.assets.map { asset -> [String: Any] in
        ["id": asset.id.rawValue, "name": asset.name, "href": base + "/photo/" + asset.id.rawValue]
      },
    ]
    if let next = page.next { values["next"] = base + "?after=" + next.rawValue }
    return render(values, link: link, token: token)
  }

  func photo(_ link: SharedLink, _ token: String, _ id: AssetID) async throws -> Response {
    let (asset, previous, next) = try await blocking {
      [library] () throws(DarkroomError) -> (Asset, AssetID?, AssetID?) in
      let asset = try library.sharedAsset(id, of: link)
      let (previous, next) = try library.neighbours(of: id, in: try library.sharedQuery(link))
      return (asset, previous, next)
    }
    let base = "/s/" + token
    var values: [String: Any] = [
      "photo": true, "id": asset.id.rawValue, "name": asset.name, "download": link.allowsDownload,
    ]
    if let previous { values["previous"] = base + "/photo/" + previous.rawValue }
    if let next { values["next"] = base + "/photo/" + next.rawValue }
    return render(values, link: link, token: token)
  }

  func render(
    _ values: [String: Any], link: SharedLink?, token: String?,
    status: HTTPResponse.Status = .ok
  ) -> Response {
    var values = values
    if let link {
      let ref = AlbumRef(link.album)
      values["title"] =
        switch ref {
        case .user(let title): title
        case .folder(let path):
          path.isEmpty ? "Photos" : path.split(separator: "/").last.map(String.init) ?? path
        case .smart(let smart): smart.title
        }
    }
    if let token { values["base"] = "/s/" + token }
    var response = gallery.page("shared", values, status: status)
    response.headers[.robotsTag] = "noindex, nofollow"
    return response
  }

  // MARK: Images

  /// A photo of the link's album: its thumbnail or aspect thumbnail (up to
  /// ``largestThumbnail``), its screen-sized rendition (up to ``largestScreen``), in JPEG,
  /// PNG or WebP; the original (`full`) when the link allows downloads. Always as the
  /// album's owner sees it (an edit made in another program shown: no `original=true`).
  func image(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let (link, _, admitted) = try await open(request, context)
    guard admitted else {
      throw APIError(.unauthorized, "password", "this shared link asks for its password")
    }
    let id = try API.assetID(context)
    let spec = try Self.spec(context, request)
    let asset: Asset
    do {
      asset = try await blocking { [library] () throws(DarkroomError) in
        try library.sharedAsset(id, of: link)
      }
    } catch let error as DarkroomError where error.kind == .notFound {
      throw APIError.notFound("no such photo in this album")
    }
    if spec.representation == .full, !link.allowsDownload {
      throw APIError(.forbidden, "forbidden", "this shared link does not allow downloads")
    }
    do {
      // A video's or a camera RAW's original is its file, as the owner's route sends it.
      if spec.representation == .full, asset.mediaType == .video || asset.format == "raw" {
        var response = try await API.assetBytes(
          library, asset, request, headers: [.cacheControl: "private, no-cache"])
        response.headers[.robotsTag] = "noindex, nofollow"
        response.headers[.contentDisposition] = Self.attachment(asset.name)
        return response
      }
      let shown = spec.shownInBrowser(
        sourceFormat: asset.format, acceptsWebP: API.acceptsWebP(request))
      let tag = "\"" + Images.tag(asset, shown) + "\""
      let rendition = try await images.image(of: asset, shown)
      var response = API.representationResponse(rendition, tag: tag, immutable: false, request)
      response.headers[.cacheControl] = "private, no-cache"
      response.headers[.robotsTag] = "noindex, nofollow"
      if spec.representation == .full {
        response.headers[.contentDisposition] = Self.attachment(asset.name)
      }
      return response
    } catch let error as DarkroomError where error.kind != .io && error.kind != .busy {
      // The photo's trouble in none of the library's words (no path inside it).
      var refused = ErrorMiddleware.translate(error, library: library)
      refused.message = "this photo cannot be shown"
      throw refused
    }
  }

  /// What a visitor may ask of a photo: a representation with a bounded size and a browser's
  /// format; nothing else (`original`, `delivery`, ...: 400).
  static func spec(_ context: DarkroomRequestContext, _ request: Request) throws -> RenditionSpec {
    let name = context.parameters.get("rep") ?? ""
    guard let representation = Representation(rawValue: name) else {
      throw APIError.notFound("no representation \(name.prefix(40)) for a shared photo")
    }
    for (key, _) in request.query where !["size", "format", "v"].contains(String(key)) {
      throw APIError.badRequest("a shared photo takes size and format; not \(key.prefix(40))")
    }
    let largest = representation == .fullscreen ? largestScreen : largestThumbnail
    if let text = request.query["size"] {
      guard representation != .full, let size = Int(text), (16...largest).contains(size) else {
        throw APIError.badRequest("size takes 16 to \(largest) here; not \(text.prefix(32))")
      }
    }
    // Within those bounds, read as the owner's route reads them.
    var spec = try API.renditionSpec(context, request)
    if representation == .fullscreen, request.query["size"] == nil {
      (spec.screenWidth, spec.screenHeight) = (largestScreen, largestScreen)
    }
    return spec
  }

  static func attachment(_ name: String) -> String {
    let safe = Self.safe(name)
    return "attachment; filename=\"\(safe.isEmpty ? "original" : safe)\""
  }

  /// A file name as a header's quoted string takes it.
  static func safe(_ name: String) -> String {
    String(name.unicodeScalars.filter { $0.isASCII && $0 != "\"" && $0 != "\\" && $0.value >= 32 })
  }
}

extension HTTPField.Name {
  static let robotsTag = Self("X-Robots-Tag")!
}
