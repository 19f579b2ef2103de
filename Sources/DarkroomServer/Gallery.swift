import Darkroom
import Foundation
import Hummingbird
import Mustache

/// The web gallery at `/`: albums, a grid of thumbnails, a viewer with an editor, and
/// upload. Pages are HTML from templates (`Gallery/*.mustache`, compiled in) and work
/// without JavaScript; the script modules (`gallery.js` and those it imports) add selection,
/// batch jobs, the editor and upload.
struct Gallery: Sendable {
  let library: Library
  let sessions: Sessions
  let tokens: Tokens
  /// Whether the server serves a folder of encrypted spaces (the bar then links to it).
  let servesSpaces: Bool
  let templates: MustacheLibrary
  /// Changes when any script module, the stylesheet or the icon does: their URLs carry it,
  /// to be cached for good.
  let assetVersion: String
  /// Failed logins per client (``ServerConfiguration/failedLogins``: five a minute).
  let logins: RateLimiter
  /// The map's tiles and their credit (``ServerConfiguration/mapTiles``), and Leaflet's
  /// script and stylesheet from Debian's libjs-leaflet; nil and empty without a map.
  let map: (tiles: String, attribution: String?)?
  let leaflet: [String: String]
  static let leafletFolder = "/usr/share/javascript/leaflet"
  static let pageSize = 200

  /// - Throws: `engine` naming a template that does not compile (a build's mistake, said
  ///   at start rather than served as an empty page).
  init(
    library: Library, sessions: Sessions, tokens: Tokens, servesSpaces: Bool = false,
    failedLogins: (burst: Double, perSecond: Double) = (5, 5.0 / 60),
    map: (tiles: String, attribution: String?)? = nil
  ) throws(DarkroomError) {
    logins = RateLimiter(rate: failedLogins.perSecond, burst: failedLogins.burst)
    self.map = map
    if map != nil {
      // Debian's Leaflet, served from here (no other host for a script).
      var leaflet: [String: String] = [:]
      for name in ["leaflet.js", "leaflet.css"] {
        let path = Self.leafletFolder + "/" + name
        guard let bytes = try? readWholeFile(path) else {
          throw DarkroomError(
            .notFound, file: path,
            "the map needs Leaflet: apt-get install libjs-leaflet (or serve without --map-tiles)")
        }
        leaflet[name] = String(decoding: bytes, as: UTF8.self)
      }
      self.leaflet = leaflet
    } else {
      leaflet = [:]
    }
    self.library = library
    self.servesSpaces = servesSpaces
    self.sessions = sessions
    self.tokens = tokens
    var templates: [String: MustacheTemplate] = [:]
    for (name, text) in Self.files where name.hasSuffix(".mustache") {
      do {
        templates[String(name.dropLast(".mustache".count))] = try MustacheTemplate(string: text)
      } catch {
        throw DarkroomError(
          .engine, file: name, "the gallery's template does not compile: \(error)")
      }
    }
    self.templates = MustacheLibrary(templates: templates)
    assetVersion = String(
      ContentHash.of(
        text: Self.staticNames.sorted().map { $0 + "\n" + (Self.files[$0] ?? "") }.joined()
      ).hex.prefix(12))
  }

  /// The gallery's files served as they are: its script modules, stylesheet and icon.
  static let staticNames = Set(
    files.keys.filter { $0.hasSuffix(".js") || $0.hasSuffix(".css") || $0.hasSuffix(".svg") })

  /// A static file. The pages name the script modules under their version
  /// (`/static/VERSION/gallery.js`), so that the modules they import by a relative name
  /// (`./api.js`) carry it too; a stylesheet or icon carries it as `?v=`. Either way, the
  /// current version is cached for good and any other is asked again each time.
  func staticFile(_ name: String, version: Substring?) throws -> Response {
    guard let text = leaflet[name] ?? (Self.staticNames.contains(name) ? Self.files[name] : nil)
    else { throw APIError.notFound("no such file") }
    let type =
      name.hasSuffix(".js")
      ? "text/javascript" : name.hasSuffix(".svg") ? "image/svg+xml" : "text/css"
    let cache =
      version.map { $0 == assetVersion } == true
      ? "public, max-age=31536000, immutable" : "no-cache"
    return Response(
      status: .ok,
      headers: [.contentType: type + "; charset=utf-8", .cacheControl: cache],
      body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
  }

  func add(to router: Router<DarkroomRequestContext>) {
    // (The router names a segment once for every route through it: `first` is the file's
    // name in the first route and its version in the second.)
    router.get("static/:first") { request, context in
      try staticFile(context.parameters.get("first") ?? "", version: request.query["v"])
    }
    router.get("static/:first/:file") { _, context in
      let version = context.parameters.get("first") ?? ""
      guard version.utf8.count == 12,
        version.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
      else { throw APIError.notFound("no such version of the gallery's files") }
      return try staticFile(context.parameters.get("file") ?? "", version: version[...])
    }
    router.get("login") { request, _ in
      page(
        "login",
        ["title": "Log in", "next": request.query["next"].map(String.init) ?? "/"])
    }
    router.post("login") { request, context in try await login(request, context) }
    router.post("logout") { request, context in
      if let session = context.session { sessions.end(session.id) }
      var headers: HTTPFields = [.location: "/login"]
      headers[.setCookie] =
        "\(AccessMiddleware.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
      return Response(status: .seeOther, headers: headers)
    }
    // Photos first, as Photos opens: the timeline of everything; the albums one step away.
    router.get("/") { request, context in
      try await shown(context) { try await album(request, context) }
    }
    router.get("albums") { _, context in try await shown(context) { try await albums(context) } }
    router.get("map") { _, context in
      try await shown(context) {
        var values = common(context, title: "Map")
        if let map {
          (values["tiles"], values["attribution"]) = (map.tiles, map.attribution ?? "")
        }
        return page("map", values)
      }
    }
    router.get("places") { request, context in
      try await shown(context) { try await places(request, context) }
    }
    router.get("album") { request, context in
      try await shown(context) { try await album(request, context) }
    }
    router.get("asset/:id") { request, context in
      // The viewer's own address (`view=1`), reloaded: the album with the viewer open on it.
      if request.query["view"] == "1", request.query["edit"] == nil {
        let id = try API.assetID(context)
        return try await shown(context) { try await album(request, context, opening: id) }
      }
      return try await shown(context) { try await asset(request, context) }
    }
    router.get("duplicates") { request, context in
      try await shown(context) { try await duplicates(request, context) }
    }
  }

  /// A page, or what went wrong as a page (a person reads it, not a program): the API's
  /// message and status for a request's mistake, with a way back. The server's own failures
  /// go on to the error middleware (JSON, logged).
  func shown(
    _ context: DarkroomRequestContext, _ page: () async throws -> Response
  ) async throws -> Response {
    do {
      return try await page()
    } catch {
      let translated =
        (error as? APIError)
        ?? (error as? DarkroomError).map { ErrorMiddleware.translate($0, library: library) }
      // Anything else goes on as it was thrown, for the error middleware to log.
      guard let translated, translated.status.code < 500 else { throw error }
      return pageOf(translated, context)
    }
  }

  private func pageOf(_ error: APIError, _ context: DarkroomRequestContext) -> Response {
    var values = common(
      context, title: error.status == .notFound ? "Not found" : "Cannot show this")
    let message = error.message.prefix(1).uppercased() + error.message.dropFirst()
    values["message"] = message.hasSuffix(".") ? message : message + "."
    return self.page("error", values, status: error.status)
  }

  // MARK: Pages

  func page(_ name: String, _ values: [String: Any], status: HTTPResponse.Status = .ok) -> Response
  {
    var values = values
    values["assetVersion"] = assetVersion
    values["page"] = name
    guard let html = templates.render(values, withTemplate: name) else {
      // No such template: the build's mistake, not the request's; never an empty page.
      return Response(
        status: .internalServerError, headers: [.contentType: "text/plain; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(string: "the gallery has no page \(name)\n")))
    }
    return Response(
      status: status,
      headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
      body: .init(byteBuffer: ByteBuffer(string: html)))
  }

  func login(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let body = try await request.body.collect(upTo: 64 << 10)
    let fields = AccessMiddleware.formFields(String(buffer: body))
    let next = Self.localPath(fields["next"])
    // Past the limit no token is checked, the right one included: 429 whatever was sent.
    if let wait = logins.wait(context.client) {
      var error = APIError(
        .tooManyRequests, "rate-limited", "too many failed logins: wait a minute")
      error.headers[.retryAfter] = String(wait)
      throw error
    }
    guard let token = fields["token"], let access = tokens.access(token) else {
      logins.take(context.client)
      return page(
        "login",
        ["title": "Log in", "next": next, "error": "That token is not one this server knows."],
        status: .unauthorized)
    }
    let session = sessions.create(access, token: token)
    var headers: HTTPFields = [.location: next]
    headers[.setCookie] =
      "\(AccessMiddleware.cookieName)=\(session.id); Path=/; HttpOnly; SameSite=Strict"
      + (request.headers[.forwardedProto] == "https" ? "; Secure" : "")
    return Response(status: .seeOther, headers: headers)
  }

  /// Where a login may send the browser: a path on this server (`/`, then neither `/` nor
  /// `\\`, and no control character or backslash anywhere, which browsers strip or read as
  /// `/`: `/<TAB>/evil.example` is `//evil.example` to them), else `/`.
  static func localPath(_ next: String?) -> String {
    guard let next, next.hasPrefix("/"),
      !next.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == "\\" }),
      !next.dropFirst().hasPrefix("/")
    else { return "/" }
    return next
  }

  func common(_ context: DarkroomRequestContext, title: String) -> [String: Any] {
    ["title": title, "csrf": context.session?.csrfToken ?? "", "spaces": servesSpaces]
  }

  func albums(_ context: DarkroomRequestContext) async throws -> Response {
    let (albums, posters) = try await blocking { [library] () throws(DarkroomError) in
      let albums = try library.albums()
      // A poster's version (a video's poster is its representative frame).
      var posters: [String: String?] = [:]
      for id in albums.compactMap(\.poster) where posters[id.rawValue] == nil {
        posters[id.rawValue] = APIAsset.version(of: id, in: library)
      }
      return (albums, posters)
    }
    func section(_ heading: String, _ kind: Album.Kind) -> [String: Any] {
      [
        "heading": heading,
        // (Problems only when there are some.)
        "albums": albums.filter {
          $0.kind == kind && !($0.ref == AlbumRef.smart(.problems).text && $0.count == 0)
        }.map { album in
          Self.tile(
            href: "/album?ref=" + Self.escapeQuery(album.ref), name: album.title,
            count: "\(album.count)", poster: album.poster,
            version: album.poster.flatMap { posters[$0.rawValue] ?? nil })
        },
      ]
    }
    var values = common(context, title: "Albums")
    values["atAlbums"] = true
    values["sections"] = [
      section("Library", .smart), section("Albums", .user), section("Folders", .folder),
    ].filter { !(($0["albums"] as? [Any])?.isEmpty ?? true) }
    return page("albums", values)
  }

  /// Where the photos were taken: countries with counts and posters; a country's towns;
  /// a town leads to its photos.
  func places(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let country = request.query["country"].map(String.init)
    let places = try await blocking { [library] () throws(DarkroomError) in
      try library.places(in: country).map { ($0, APIAsset.version(of: $0.poster, in: library)) }
    }
    var values = common(context, title: country ?? "Places")
    values["atPlaces"] = country == nil
    values["country"] = country
    values["empty"] = places.isEmpty
    values["places"] = places.map { place, version in
      Self.tile(
        href: country == nil
          ? "/places?country=" + Self.escapeQuery(place.name)
          : "/album?ref=smart%3Aall&place=" + Self.escapeQuery(place.name),
        name: place.name, count: Self.items(place.count), poster: place.poster,
        version: version, region: place.region)
    }
    return page("places", values)
  }

  /// An album's page; `opening`: with the viewer open on that asset (its address reloaded).
  func album(
    _ request: Request, _ context: DarkroomRequestContext, opening: AssetID? = nil
  ) async throws -> Response {
    let query = request.query
    let ref = query["ref"].map(String.init) ?? "smart:all"
    // The address's filters are the list's and the API's words (`text`, `rating`, ...).
    // (An empty field of the filters' form is no filter; `q` is `text`, as people type it.)
    let asked = AssetQuery.parameterNames.filter { $0 != "album" && $0 != "after" }
      .compactMap { name -> (name: String, value: String)? in
        let value = query[name] ?? (name == "text" ? query["q"] : nil)
        return value.flatMap { $0.isEmpty ? nil : (name, String($0)) }
      }
    let filters = Self.newestFirst(ref, asked)
    let wholeQuery = try AssetQuery(parameters: [("album", ref)] + filters)
    let assetQuery =
      try query["after"].map { after in
        try AssetQuery(parameters: [("album", ref)] + filters + [("after", String(after))])
      } ?? wholeQuery
    let (assets, count, next) = try await blocking { [library] () throws(DarkroomError) in
      let page = try library.page(of: assetQuery, limit: Self.pageSize)
      var all = page.count ?? 0
      if page.count == nil { all = try library.count(matching: wholeQuery) }
      // An empty page: an empty album (or search), or no album of that name (a page that
      // says so).
      if all == 0 { _ = try library.album(ref) }
      return (page.assets, all, page.next?.rawValue)
    }
    // A folder's folders, each a way in (a folder of folders alone would be a dead end).
    var subfolders: [[String: Any]] = []
    if case .folder(let path) = AlbumRef(ref) {
      let children = try await blocking { [library] () throws(DarkroomError) in
        try library.albums().filter { $0.kind == .folder && $0.parent == path }.map {
          ($0, APIAsset.version(of: $0.poster, in: library))
        }
      }
      subfolders = children.map { child, version in
        Self.tile(
          href: "/album?ref=" + Self.escapeQuery(child.ref), name: child.title,
          count: Self.items(child.count), poster: child.poster, version: version)
      }
    }
    let escaped = Self.escapeQuery(ref)
    let title: String =
      switch AlbumRef(ref) {
      case .smart(let smart): smart.title
      case .folder(let path): path.isEmpty ? "Library folder" : path
      case .user(let title): title
      }
    var values = common(context, title: title)
    values["atPhotos"] = ref == "smart:all"
    values["ref"] = escaped
    values["albumRef"] = ref
    values["text"] = filters.first { $0.name == "text" }?.value
    values["filtered"] = asked.contains { $0.name != "sort" }
    // The filters again, for the next page's link and for the script's jobs and downloads.
    values["filterQuery"] = filters.map { "&" + $0.name + "=" + Self.escapeQuery($0.value) }
      .joined()
    values["filters"] = Self.json(Dictionary(filters.map { ($0.name, $0.value) }) { a, _ in a })
    values["count"] = count
    Self.filterFields(into: &values, filters, ref: ref)
    values["summary"] =
      Self.items(count)
      + (subfolders.isEmpty
        ? "" : subfolders.count == 1 ? " and 1 folder" : " and \(subfolders.count) folders")
    values["subfolders"] = subfolders
    values["hasSubfolders"] = !subfolders.isEmpty
    values["trash"] = ref == "smart:trash"
    values["problems"] = ref == AlbumRef.smart(.problems).text
    if let opening {
      _ = try await blocking { [library] () throws(DarkroomError) in try library.asset(opening) }
      values["open"] = opening.rawValue
    }
    values["sort"] = wholeQuery.sort.rawValue
    if case .user = AlbumRef(ref) { values["user"] = true }
    // The built-in presets, then the library's own (saved from an edit).
    values["presets"] = Presets.names + library.userPresets().map(\.name)
    values["next"] = next
    // By date, a month's first photo on the page opens with the month's name.
    let byDate = [.date, .dateDescending].contains(wholeQuery.sort)
    var month = ""
    values["assets"] = assets.map { asset -> [String: Any] in
      var cell: [String: Any] = [
        "id": asset.id.rawValue, "version": asset.version,
        "name": asset.name,
      ]
      let its = Self.month(of: asset)
      if byDate && its != month { cell["month"] = its }
      month = its
      return cell
    }
    return page("album", values)
  }

  /// The filters' form, showing what the address asks for: each choice with whether it is
  /// the one chosen.
  static func filterFields(
    into values: inout [String: Any], _ filters: [(name: String, value: String)], ref: String
  ) {
    let chosen = Dictionary(filters.map { ($0.name, $0.value) }) { first, _ in first }
    func options(_ name: String, _ list: [(String, String)]) -> [[String: Any]] {
      list.map { ["value": $0.0, "label": $0.1, "selected": chosen[name, default: ""] == $0.0] }
    }
    var sorts = [
      ("-date", "Newest first"), ("date", "Oldest first"), ("name", "Name"), ("size", "Size"),
    ]
    values["defaultSort"] = "-date"
    if case .user = AlbumRef(ref) {
      sorts.insert(("", "Album order"), at: 0)
      values["defaultSort"] = ""
    }
    values["sortOptions"] = options("sort", sorts)
    values["typeOptions"] = options(
      "type", [("", "Any"), ("photo", "Photos"), ("video", "Videos")])
    // A value the form has no choice for (`3-5`) is one more choice, so a submit keeps it.
    var ratings = [
      ("", "Any"), (">=1", "★ or more"), (">=2", "★★ or more"), (">=3", "★★★ or more"),
      (">=4", "★★★★ or more"), ("5", "★★★★★"), ("-1", "Rejected"),
    ]
    if let rating = chosen["rating"], !ratings.contains(where: { $0.0 == rating }) {
      ratings.append((rating, rating))
    }
    values["ratingOptions"] = options("rating", ratings)
    // Filters the form has no field for, and times a date field cannot show, go along
    // unseen.
    let dateOnly = { (text: String?) in text.map { $0.count == 10 } ?? true }
    values["hiddenFilters"] = filters.filter { filter in
      ["keyword", "place", "near", "month", "day", "min-duration", "max-duration"].contains(
        filter.name)
        || (["from", "to"].contains(filter.name) && !dateOnly(filter.value))
    }.map { ["name": $0.name, "value": $0.value] }
    values["editedOptions"] = options(
      "edited", [("", "Either"), ("true", "Edited"), ("false", "Not edited")])
    values["from"] = dateOnly(chosen["from"]) ? chosen["from"] : nil
    values["to"] = dateOnly(chosen["to"]) ? chosen["to"] : nil
    values["camera"] = chosen["camera"]
    values["favouritesOnly"] = chosen["favourite"] == "true"
  }

  /// `May 2021`: the month on the clock where the photo was taken (``Asset/month``, the
  /// timeline's sections).
  static func month(of asset: Asset) -> String {
    let month = asset.month
    guard month > 0 else { return "Undated" }
    return "\(monthNames[max(1, min(12, month % 100)) - 1]) \(month / 100)"
  }

  private static let monthNames = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
  ]

  /// The gallery shows the newest first (a user album in its own order), unless the address
  /// asks for another `sort`.
  static func newestFirst(_ ref: String, _ filters: [(name: String, value: String)])
    -> [(name: String, value: String)]
  {
    if case .user = AlbumRef(ref) { return filters }
    if filters.contains(where: { $0.name == "sort" }) { return filters }
    return filters + [(name: "sort", value: "-date")]
  }

  func asset(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let id = try API.assetID(context)
    let ref = request.query["ref"].map(String.init) ?? "smart:all"
    let (asset, previous, next) = try await blocking { [library] () throws(DarkroomError) in
      let asset = try library.asset(id)
      let (previous, next) = try library.neighbours(
        of: id, in: AssetQuery(parameters: [("album", ref)] + Self.newestFirst(ref, [])))
      return (asset, previous, next)
    }
    let query = "?ref=" + Self.escapeQuery(ref)
    var values = assetValues(asset, context, api: "/api/assets")
    values["back"] = "/album\(query)&at=\(AssetQuery.monthText(asset.month))"
    values["previous"] = previous.map { "/asset/\($0.rawValue)\(query)" }
    values["next"] = next.map { "/asset/\($0.rawValue)\(query)" }
    let rating = asset.rating ?? 0
    values["stars"] = rating < 0 ? "rejected" : rating == 0 ? "none" : "\(rating) of 5 stars"
    values["rating"] = rating
    values["rejected"] = rating < 0
    values["ratingStars"] = (1...5).map { ["n": $0, "on": $0 <= rating] as [String: Any] }
    values["favourite"] = asset.isFavourite
    values["kept"] = true
    return page("asset", values)
  }

  /// What the asset page shows of `asset`, whichever library it is in, with `api` the asset
  /// routes its scripts call (`/api/assets` or a space's `/api/space/assets`): its photo, what
  /// is wrong with it, its caption, place, keywords and people, an edit made elsewhere. The
  /// caller adds the way back, the neighbours, and what its library keeps (stars, favourite).
  func assetValues(_ asset: Asset, _ context: DarkroomRequestContext, api: String)
    -> [String: Any]
  {
    var values = common(context, title: asset.name)
    values["api"] = api
    values["id"] = asset.id.rawValue
    values["version"] = asset.version
    values["name"] = asset.name
    values["width"] = asset.displayWidth
    values["height"] = asset.displayHeight
    values["camera"] = asset.camera
    values["video"] = asset.mediaType == .video
    // A damaged file: what is wrong, and its pixels only when its header was read.
    values["shown"] = asset.isShowable
    values["problem"] = asset.damage?.problem
    values["detail"] = asset.damage?.detail
    values["caption"] = asset.caption
    let place = [asset.place, asset.region, asset.country].compactMap { $0 }
    values["where"] =
      !place.isEmpty ? place.joined(separator: ", ") : asset.latitude == nil ? nil : "Location"
    if let latitude = asset.latitude, let longitude = asset.longitude {
      let (lat, lon) = (String(format: "%.5f", latitude), String(format: "%.5f", longitude))
      values["coordinates"] = "\(lat), \(lon)"
      values["map"] = "https://www.openstreetmap.org/?mlat=\(lat)&mlon=\(lon)#map=14/\(lat)/\(lon)"
    }
    values["timeZone"] = asset.timeZone
    values["keywords"] = asset.keywords.isEmpty ? nil : asset.keywords.joined(separator: ", ")
    values["people"] = asset.people.isEmpty ? nil : asset.people.joined(separator: ", ")
    values["elsewhere"] = asset.foreignSettings.map { "\($0.programName) (\($0.source))" }
    return values
  }

  /// Groups of duplicates side by side (`?near=1`: look-alikes too), ``duplicateGroupsPerPage``
  /// a page (`?page=N`), each photo with what tells them apart, the first kept by default;
  /// the script trashes the rest of a group. A group of more than ``duplicatesShown`` shows
  /// that many and says how many more (the command line resolves it).
  func duplicates(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let near = request.query["near"].map { $0 == "1" || $0 == "true" } ?? false
    var number = 1
    if let asked = request.query["page"] {
      guard let value = Int(asked), value >= 1 else {
        throw APIError.badRequest("page takes a page number from 1; not \(asked.prefix(64))")
      }
      number = value
    }
    let (perPage, shownLimit, asked) = (Self.duplicateGroupsPerPage, Self.duplicatesShown, number)
    let (groups, total, pages) = try await blocking {
      [library] () throws(DarkroomError) -> ([(group: [Asset], more: Int)], Int, Int) in
      let all = try library.duplicates(near: near)
      let pages = max(1, (all.count + perPage - 1) / perPage)
      let first = (min(asked, pages) - 1) * perPage
      let groups = try all.dropFirst(first).prefix(perPage).map {
        group throws(DarkroomError) -> (group: [Asset], more: Int) in
        // The largest first (the most pixels, then bytes), then the first catalogued.
        let members = try library.assets(withIDs: group.assets).sorted {
          // (In Double: a header's sizes multiplied may not fit an Int.)
          (Double($0.displayWidth) * Double($0.displayHeight), $0.byteSize, $1.id)
            > (Double($1.displayWidth) * Double($1.displayHeight), $1.byteSize, $0.id)
        }
        return (Array(members.prefix(shownLimit)), max(0, members.count - shownLimit))
      }.filter { $0.group.count > 1 }
      return (groups, all.count, pages)
    }
    let shownPage = min(number, pages)
    let first = (shownPage - 1) * perPage
    var values = common(context, title: near ? "Duplicates and look-alikes" : "Duplicates")
    values["near"] = near
    values["summary"] =
      total == 0
      ? "No duplicates."
      : (total == 1 ? "1 group" : "\(total) groups")
        + (pages > 1 ? ", page \(shownPage) of \(pages)" : "")
    let address = near ? "/duplicates?near=1&page=" : "/duplicates?page="
    if shownPage > 1 { values["previous"] = address + "\(shownPage - 1)" }
    if shownPage < pages { values["next"] = address + "\(shownPage + 1)" }
    values["groups"] = groups.enumerated().map { index, shown -> [String: Any] in
      [
        "group": first + index + 1,
        "more": shown.more > 0 ? "\(shown.more)" : false,
        "assets": shown.group.enumerated().map { position, asset -> [String: Any] in
          [
            "id": asset.id.rawValue, "version": asset.version, "path": asset.path,
            "name": asset.name, "keep": position == 0,
            "size": "\(asset.displayWidth) × \(asset.displayHeight)",
            "bytes": ByteCountFormatter.string(fromByteCount: asset.byteSize, countStyle: .file),
            "date": Self.day(of: asset),
          ]
        },
      ]
    }
    return page("duplicates", values)
  }

  /// A tile of a page of albums, folders or places (`tile.mustache`): where it leads, its
  /// name, its count as said, and its poster when the poster shows something.
  static func tile(
    href: String, name: String, count: String, poster: AssetID?, version: String?,
    region: String? = nil
  ) -> [String: Any] {
    var values: [String: Any] = ["href": href, "name": name, "count": count]
    if let region { values["region"] = region }
    if let poster, let version {
      (values["poster"], values["version"]) = (poster.rawValue, version)
    }
    return values
  }

  /// `1 item`, `5 items`.
  static func items(_ count: Int) -> String { count == 1 ? "1 item" : "\(count) items" }

  /// A video's length as the gallery shows it, minutes and seconds: `0:07`, `12:30`
  /// (gallery.js's `durationText`).
  static func length(_ seconds: Double) -> String {
    let whole = seconds.isFinite ? max(0, Int(seconds.rounded())) : 0
    let rest = whole % 60
    return "\(whole / 60):" + (rest < 10 ? "0" : "") + "\(rest)"
  }

  /// Groups on a page of the duplicates, and photos shown of one group.
  static let duplicateGroupsPerPage = 50
  static let duplicatesShown = 50

  /// `16 March 2019`, on the clock where it was taken.
  static func day(of asset: Asset) -> String {
    let parts = utcCalendar.dateComponents(
      [.year, .month, .day], from: Date(timeIntervalSince1970: asset.localSortDate))
    let month = parts.month.map { monthNames[max(1, min(12, $0)) - 1] } ?? ""
    return "\(parts.day ?? 0) \(month) \(parts.year ?? 0)"
  }

  /// Made once, not for each cell of a page.
  private static let utcCalendar: Calendar = {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
    return calendar
  }()

  /// `value` as JSON text (for a `data-` attribute the template escapes).
  static func json(_ value: [String: String]) -> String {
    (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
  }

  static func escapeQuery(_ text: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~:")
    return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
  }
}
