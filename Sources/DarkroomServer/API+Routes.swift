import Darkroom
import Foundation
import Hummingbird

/// The API's routes: a collection per resource under `/api`, each route a line that names
/// its handler. A handler parses the request, calls `Library` (or the server's jobs, images
/// and change feed) and encodes what comes back.
extension API {
  typealias Routes = RouteCollection<DarkroomRequestContext>

  func add(to router: Router<DarkroomRequestContext>) {
    router.addRoutes(assetRoutes(.served(library)), atPath: "/api/assets")
    router.addRoutes(albumRoutes(), atPath: "/api/albums")
    router.addRoutes(shareRoutes(), atPath: "/api/shares")
    router.addRoutes(filterRoutes(), atPath: "/api")
    router.addRoutes(jobRoutes(), atPath: "/api/jobs")
    router.addRoutes(trashRoutes(), atPath: "/api/trash")
    router.addRoutes(libraryRoutes(), atPath: "/api")
  }

  /// An asset: the list of them, one, its history, its edits, its images; of the served
  /// library or of a session's unlocked space (`scope`).
  func assetRoutes(_ scope: AssetScope) -> Routes {
    let routes = Routes(context: DarkroomRequestContext.self)
    routes.get { request, context in try await listAssets(request, context, scope) }
    routes.get(":id") { _, context in try await asset(context, scope) }
    routes.get(":id/history") { _, context in try await history(context, scope) }
    routes.post(":id/edit") { request, context in try await edit(request, context, scope) }
    routes.post(":id/revert") { request, context in try await revert(request, context, scope) }
    routes.post(":id/preview") { request, context in try await preview(request, context, scope) }
    routes.post(":id/auto") { request, context in try await auto(request, context, scope) }
    routes.put(":id/favourite") { request, context in
      try await favourite(request, context, scope)
    }
    routes.patch(":id/metadata") { request, context in
      try await metadata(request, context, scope)
    }
    routes.get(":id/:rep") { request, context in
      guard !scope.sealed else { return try await sealedRepresentation(request, context, scope) }
      let response = try await representation(request, context)
      return context.bySignature ? SignedAddresses.kept(response, request) : response
    }
    return routes
  }

  /// Albums: listed; made, renamed, deleted, added to and taken from (one POST, by `op`).
  func albumRoutes() -> Routes {
    let routes = Routes(context: DarkroomRequestContext.self)
    routes.get { _, _ in try await albums() }
    routes.post { request, context in try await changeAlbums(request, context) }
    return routes
  }

  /// Shared links of an album: listed, made, revoked.
  func shareRoutes() -> Routes {
    let routes = Routes(context: DarkroomRequestContext.self)
    routes.get { request, _ in try await sharedLinks(request) }
    routes.post { request, context in try await share(request, context) }
    routes.delete(":id") { _, context in try await revokeShare(context) }
    return routes
  }

  /// The filters and presets (built in and the library's own).
  func filterRoutes() -> Routes {
    let routes = Routes(context: DarkroomRequestContext.self)
    routes.get("filters") { _, _ in try Self.encode(APIFilters(userPresets: library.userPresets()))
    }
    routes.post("presets") { request, context in try await savePreset(request, context) }
    routes.delete("presets/:name") { _, context in try await deletePreset(context) }
    return routes
  }

  /// Batch jobs: started, read, resumed, followed.
  func jobRoutes() -> Routes {
    let routes = Routes(context: DarkroomRequestContext.self)
    routes.post { request, context in try await startJob(request, context) }
    routes.get(":id") { _, context in try Self.encode(try await job(context).status) }
    routes.post(":id/resume") { _, context in try await resumeJob(context) }
    routes.get(":id/events") { _, context in try await jobEvents(context) }
    return routes
  }

  /// The trash: listed and emptied.
  func trashRoutes() -> Routes {
    let routes = Routes(context: DarkroomRequestContext.self)
    routes.get { _, _ in try await trash() }
    routes.post("empty") { _, _ in try await emptyTrash() }
    return routes
  }

  /// The calls of one route each over the whole library: the timeline's months, the map's
  /// clusters, places, duplicates, upload, download, the change feed.
  func libraryRoutes() -> Routes {
    let routes = Routes(context: DarkroomRequestContext.self)
    routes.get("timeline") { request, _ in try await timeline(request) }
    routes.get("map") { request, _ in try await map(request) }
    routes.get("places") { request, _ in try await places(request) }
    routes.get("duplicates") { request, _ in try await duplicates(request) }
    routes.post("uploads") { request, context in try await upload(request, context) }
    routes.post("download") { request, context in try await download(request, context) }
    routes.get("changes") { request, _ in try changeFeed(request) }
    return routes
  }
}

// MARK: Handlers

/// Whose assets the asset routes reach (``API/assetRoutes(_:)``): the served library's
/// (`/api/assets`), or those of the space a gallery session unlocked (`/api/space/assets`,
/// ``SpaceRoutes``). The routes and their calls are written once and mounted for each.
struct AssetScope: Sendable {
  /// The library a request reaches, or the 4xx that says why none (no session, a locked
  /// space).
  let library: @Sendable (DarkroomRequestContext) throws -> Library
  /// A space's: its assets are shown in a space's shape (``APISpaceAsset``, never a keyed
  /// identity, an edit answered by the asset), and its images are kept by no address, in no
  /// front server and in no browser (``API/sealedRepresentation(_:_:_:)``).
  let sealed: Bool

  static func served(_ library: Library) -> AssetScope {
    AssetScope(library: { _ in library }, sealed: false)
  }
}

extension API {
  /// An asset as `scope` shows it.
  func shown(_ asset: Asset, _ scope: AssetScope) -> any Encodable & Sendable {
    scope.sealed ? APISpaceAsset(asset) : APIAsset(asset, signed: signing?.signatures(asset))
  }

  func asset(_ context: DarkroomRequestContext, _ scope: AssetScope) async throws -> Response {
    let (library, id) = (try scope.library(context), try Self.assetID(context))
    let asset = try await blocking { () throws(DarkroomError) in try library.asset(id) }
    return try Self.encode(shown(asset, scope))
  }

  func history(_ context: DarkroomRequestContext, _ scope: AssetScope) async throws -> Response {
    let (library, id) = (try scope.library(context), try Self.assetID(context))
    let history = try await blocking { () throws(DarkroomError) in
      try library.editHistory(id)
    }
    return try Self.encode(APIHistory(history))
  }

  /// An edit: its adjustment data (a space's: the asset as it is now).
  func edit(_ request: Request, _ context: DarkroomRequestContext, _ scope: AssetScope)
    async throws -> Response
  {
    let (library, id) = (try scope.library(context), try Self.assetID(context))
    let body = try await request.decode(as: EditBody.self, context: context)
    let graph = try body.filterGraph(presets: library.presetsByName())
    let mode = body.editMode
    let pixels = configuration.pixels
    let result = try await blocking { () throws(DarkroomError) in
      try library.editBlocking(id, with: graph, mode: mode, settings: pixels)
    }
    if scope.sealed { return try Self.encode(APISpaceAsset(try library.asset(id))) }
    var adjustment = APIAdjustment(result.adjustment)
    adjustment.asset = result.asset?.rawValue ?? id.rawValue
    return try Self.encode(adjustment)
  }

  /// A revert: what it did (a space's: the asset as it is now).
  func revert(_ request: Request, _ context: DarkroomRequestContext, _ scope: AssetScope)
    async throws -> Response
  {
    let (library, id) = (try scope.library(context), try Self.assetID(context))
    let body = try await Self.optionalBody(RevertBody.self, request, context)
    let pixels = configuration.pixels
    let outcome = try await blocking { () throws(DarkroomError) in
      try library.revertBlocking(id, to: body?.version, settings: pixels)
    }
    if scope.sealed { return try Self.encode(APISpaceAsset(try library.asset(id))) }
    return try Self.encode(APIRevert(outcome))
  }

  func preview(_ request: Request, _ context: DarkroomRequestContext, _ scope: AssetScope)
    async throws -> Response
  {
    let (library, id) = (try scope.library(context), try Self.assetID(context))
    let body = try await request.decode(as: EditBody.self, context: context)
    let graph = try body.filterGraph(presets: library.presetsByName())
    var spec = RenditionSpec(.fullscreen)
    let size = body.size ?? 1280
    guard (64...4096).contains(size) else { throw APIError.badRequest("size takes 64 to 4096") }
    (spec.screenWidth, spec.screenHeight) = (size, size)
    spec.quality = 80
    let pixels = configuration.pixels
    let previewSpec = spec
    let rendition = try await images.render("preview-\(Tokens.random())") {
      () throws(DarkroomError) in
      try library.preview(id, graph: graph, previewSpec, settings: pixels)
    }
    var headers: HTTPFields = [.contentType: "image/jpeg", .cacheControl: "no-store"]
    headers[.contentLength] = String(rendition.bytes.count)
    return Response(
      status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: rendition.bytes)))
  }

  func auto(_ request: Request, _ context: DarkroomRequestContext, _ scope: AssetScope)
    async throws -> Response
  {
    let (library, id) = (try scope.library(context), try Self.assetID(context))
    let body = try await Self.optionalBody(EditBody.self, request, context)
    // No filters (or none at all): Auto on the original alone.
    let given = body.flatMap { $0.graph != nil || !($0.filters ?? []).isEmpty ? $0 : nil }
    let graph = try given?.filterGraph(presets: library.presetsByName())
    let pixels = configuration.pixels
    let chosen = try await blocking { () throws(DarkroomError) in
      try library.autoFilters(id, after: graph ?? FilterGraph(nodes: []), settings: pixels)
    }
    return try Self.encode(APIAutoFilters(filters: chosen.map(\.text)))
  }

  func favourite(_ request: Request, _ context: DarkroomRequestContext, _ scope: AssetScope)
    async throws -> Response
  {
    let (library, id) = (try scope.library(context), try Self.assetID(context))
    let body = try await request.decode(as: FavouriteBody.self, context: context)
    _ = try library.asset(id)  // 404 for an unknown id, as everywhere
    try await blocking { () throws(DarkroomError) in
      try library.edit(.favourite([id], body.favourite))
    }
    return try Self.encode(shown(try library.asset(id), scope))
  }

  func metadata(_ request: Request, _ context: DarkroomRequestContext, _ scope: AssetScope)
    async throws -> Response
  {
    let (library, id) = (try scope.library(context), try Self.assetID(context))
    let change = try await request.decode(as: MetadataEdit.self, context: context)
    let assets = try await blocking { () throws(DarkroomError) in
      try library.writeMetadata(change, to: [id])
    }
    guard let asset = assets.first else { throw APIError.notFound("no such asset") }
    return try Self.encode(shown(asset, scope))
  }

  func albums() async throws -> Response {
    let albums = try await blocking { [library] () throws(DarkroomError) in try library.albums() }
    return try Self.encode(APIAlbums(albums: albums))
  }

  func changeAlbums(_ request: Request, _ context: DarkroomRequestContext) async throws
    -> Response
  {
    let body = try await request.decode(as: AlbumBody.self, context: context)
    var ids: [AssetID] = []
    if let selection = body.selection { ids = try await self.ids(in: selection) }
    let change = try body.change(ids)
    try await blocking { [library] () throws(DarkroomError) in try library.edit(change) }
    return try await albums()
  }

  func timeline(_ request: Request) async throws -> Response {
    let query = try AssetQuery(
      parameters: try Self.queryParameters(request, also: [], without: ["after"]))
    let months = try await blocking { [library] () throws(DarkroomError) in
      try library.months(matching: query)
    }
    return try Self.encode(APITimeline(months))
  }

  /// The map's clusters in a box (`south`, `west`, `north`, `east`) at a `zoom`.
  func map(_ request: Request) async throws -> Response {
    func number(_ name: String, _ range: ClosedRange<Double>, _ otherwise: Double) throws
      -> Double
    {
      guard let text = request.query[name] else { return otherwise }
      guard let value = Double(String(text)), range.contains(value) else {
        throw APIError.badRequest(
          "\(name) takes \(Int(range.lowerBound)) to \(Int(range.upperBound)); not \(text.prefix(32))"
        )
      }
      return value
    }
    var zoom = 1
    if let text = request.query["zoom"] {
      guard let value = Int(String(text)), (0...22).contains(value) else {
        throw APIError.badRequest(
          "zoom takes a whole number from 0 to 22; not \(text.prefix(32))")
      }
      zoom = value
    }
    let (south, north) = (try number("south", -90...90, -90), try number("north", -90...90, 90))
    let (west, east) = (
      try number("west", -180...180, -180), try number("east", -180...180, 180)
    )
    // (A box whose south is above its north holds nothing.)
    let clusters = try await blocking { [library, zoom] () throws(DarkroomError) in
      guard south <= north else { return [APIMapCluster]() }
      let clusters = try library.mapClusters(
        zoom: zoom, south: south, west: west, north: north, east: east)
      return clusters.map { cluster in
        APIMapCluster(cluster, version: APIAsset.version(of: cluster.poster, in: library))
      }
    }
    return try Self.encode(APIMap(clusters: clusters))
  }

  func places(_ request: Request) async throws -> Response {
    let country = request.query["country"].map(String.init)
    let places = try await blocking { [library] () throws(DarkroomError) in
      try library.places(in: country)
    }
    return try Self.encode(APIPlaces(places: places))
  }

  func sharedLinks(_ request: Request) async throws -> Response {
    let album = request.query["album"].map(String.init)
    let links = try await blocking { [library] () throws(DarkroomError) in
      try library.sharedLinks(album: album)
    }
    return try Self.encode(APISharedLinks(links: links.map(APISharedLink.init)))
  }

  func share(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let body = try await request.decode(as: ShareBody.self, context: context)
    let expires = try body.expiry()
    let made = try await blocking { [library] () throws(DarkroomError) in
      try library.share(
        album: body.album, expires: expires, password: body.password,
        allowsDownload: body.download ?? false)
    }
    var link = APISharedLink(made.link)
    link.url = "/s/" + made.token
    return try Self.encode(link, status: .created)
  }

  func revokeShare(_ context: DarkroomRequestContext) async throws -> Response {
    let id = context.parameters.get("id") ?? ""
    try await blocking { [library] () throws(DarkroomError) in try library.revokeSharedLink(id) }
    return Response(status: .noContent)
  }

  /// A user preset, from filters (or a graph) or from an asset's edit, not both.
  func savePreset(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let body = try await request.decode(as: PresetBody.self, context: context)
    let graph: FilterGraph?
    if body.from == nil {
      graph = try EditBody(filters: body.filters, graph: body.graph).filterGraph(
        presets: library.presetsByName())
    } else {
      guard body.filters == nil, body.graph == nil else {
        throw APIError.badRequest("a preset comes from an asset's edit or from filters, not both")
      }
      graph = nil
    }
    let from = try body.from.map { text in
      guard let id = AssetID(text) else {
        throw APIError.badRequest("from takes an asset id: not \(text.prefix(64))")
      }
      return id
    }
    let preset = try await blocking { [library] () throws(DarkroomError) in
      if let from {
        _ = try library.asset(from)  // 404 for an unknown id
        return try library.savePreset(body.name, fromEditOf: from, description: body.description)
      }
      return try library.savePreset(
        body.name, graph: graph ?? FilterGraph(nodes: []), description: body.description)
    }
    return try Self.encode(
      APIFilters.Preset(name: preset.name, graph: preset.graph, user: true), status: .created)
  }

  func deletePreset(_ context: DarkroomRequestContext) async throws -> Response {
    let name = context.parameters.get("name") ?? ""
    let removed = try await blocking { [library] () throws(DarkroomError) in
      try library.deletePreset(name)
    }
    guard removed else { throw APIError.notFound("no such preset: \(name.prefix(64))") }
    return Response(status: .noContent)
  }

  func startJob(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let body = try await request.decode(as: JobBody.self, context: context)
    let action = try body.jobAction(presets: library.presetsByName())
    let ids = try await ids(in: body.selection)
    return try Self.accepted(jobs.start(action, on: ids))
  }

  func resumeJob(_ context: DarkroomRequestContext) async throws -> Response {
    let found = try await job(context)
    guard found.status.state == .stopped || found.status.state == .interrupted else {
      throw APIError(
        .conflict, "conflict",
        "the job is \(found.status.state.rawValue): only a stopped or interrupted one resumes")
    }
    let job: Job
    do {
      job = try await blocking { [jobs] () throws(DarkroomError) in try jobs.resume(found) }
    } catch let error as DarkroomError where error.kind == .invalidArgument {
      throw APIError(.conflict, "conflict", error.message)  // resumed since it was read
    }
    return try Self.accepted(job)
  }

  /// A job started or resumed: 202, its status, and where to follow it.
  static func accepted(_ job: Job) throws -> Response {
    var response = try encode(job.status, status: .accepted)
    response.headers[.location] = "/api/jobs/\(job.id)"
    return response
  }

  func jobEvents(_ context: DarkroomRequestContext) async throws -> Response {
    let job = try await job(context)
    return Self.eventStream { writer in
      for await event in job.events() {
        switch event {
        case .progress(let status, let outcome):
          try await writer.event(
            "progress", Self.jsonText(JobProgress(status: status, outcome: outcome)))
        case .finished(let status):
          try await writer.event("done", Self.jsonText(status))
        }
      }
    }
  }

  func trash() async throws -> Response {
    let assets = try await blocking { [library] () throws(DarkroomError) in
      try library.trashedAssets()
    }
    return try Self.encode(APIAssets(assets: assets.map { APIAsset($0) }, count: assets.count))
  }

  func emptyTrash() async throws -> Response {
    let emptied = try await blocking { [library] () throws(DarkroomError) in
      try library.emptyTrash()
    }
    return try Self.encode(emptied)
  }

  func duplicates(_ request: Request) async throws -> Response {
    let near = request.query["near"].map { $0 == "true" || $0 == "1" } ?? false
    let groups = try await blocking { [library] () throws(DarkroomError) in
      try library.duplicates(near: near)
    }
    return try Self.encode(APIDuplicates(groups: groups))
  }
}
