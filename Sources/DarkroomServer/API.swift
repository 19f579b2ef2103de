import Darkroom
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// The JSON API under `/api` (described in `docs/openapi.yaml`): thin routes over `Library`.
struct API: Sendable {
  let library: Library
  let configuration: ServerConfiguration
  let images: Images
  let jobs: Jobs
  /// With `--signed-renditions`: listings carry each asset's signed addresses.
  let signing: SignedAddresses?
  /// Versioned URLs answered by `X-Accel-Redirect` before, with their cache file.
  let redirected = RedirectMemory()

  static let json = "application/json; charset=utf-8"
  /// The page size of a space's list without a `limit`: every asset (it was one list before
  /// it took pages).
  static let wholeSpace = Int.max - 1

  // MARK: Assets

  /// The list's parameters of a request (a name it does not know is a 400 naming those it
  /// takes); `also` are the call's own, left out of the list.
  static func queryParameters(_ request: Request, also: [String], without: [String] = [])
    throws -> [(name: String, value: String)]
  {
    let names = AssetQuery.parameterNames.filter { !without.contains($0) }
    var parameters: [(name: String, value: String)] = []
    for (name, value) in request.query {
      let (name, value) = (String(name), String(value))
      if also.contains(name) { continue }
      guard names.contains(name) else {
        throw APIError.badRequest(
          "unknown parameter \(name): this call takes \((names + also).joined(separator: ", "))")
      }
      parameters.append((name, value))
    }
    return parameters
  }

  /// A page of the assets a query matches (`trashed=true`: of those in the trash), in the
  /// shape `scope` shows them.
  func listAssets(_ request: Request, _ context: DarkroomRequestContext, _ scope: AssetScope)
    async throws -> Response
  {
    let library = try scope.library(context)
    var limit = scope.sealed ? Self.wholeSpace : 100
    if let value = request.query["limit"] {
      guard let n = Int(value), (1...1000).contains(n) else {
        throw APIError.badRequest("limit takes 1 to 1000; not \(value)")
      }
      limit = n
    }
    var query = try AssetQuery(
      parameters: try Self.queryParameters(request, also: ["limit", "trashed"]))
    if let value = request.query["trashed"] {
      query.trashed = try AssetQuery.bool(String(value), name: "trashed")
    }
    let (pageQuery, pageSize) = (query, limit)
    let page = try await blocking { () throws(DarkroomError) in
      try library.page(of: pageQuery, limit: pageSize)
    }
    let next = page.next?.rawValue
    if scope.sealed {
      return try Self.encode(
        APIAssets(assets: page.assets.map(APISpaceAsset.init), count: page.count, next: next))
    }
    let now = Date().timeIntervalSince1970
    return try Self.encode(
      APIAssets(
        assets: page.assets.map { APIAsset($0, signed: signing?.signatures($0, now: now)) },
        count: page.count, next: next))
  }

  static func assetID(_ context: DarkroomRequestContext) throws -> AssetID {
    let text = context.parameters.get("id") ?? ""
    guard let id = AssetID(text) else {
      throw APIError.notFound("not an asset id: \(text.prefix(64))")
    }
    return id
  }

  func job(_ context: DarkroomRequestContext) async throws -> Job {
    let id = context.parameters.get("id") ?? ""
    let job = try await blocking { [jobs] () throws(DarkroomError) in try jobs.job(id) }
    guard let job else { throw APIError.notFound("no such job: \(id.prefix(64))") }
    return job
  }

  // MARK: Representations

  func representation(_ request: Request, _ context: DarkroomRequestContext) async throws
    -> Response
  {
    // A versioned URL served before is answered from memory: it names one version of one
    // asset, and its bytes never change.
    // (Kept by URL and by what the request accepts: one URL may be sent as WebP or JPEG.)
    let versioned = request.query["v"] != nil
    let webP = Self.acceptsWebP(request)
    let memoryKey = request.uri.string + (webP ? " webp" : "")
    if versioned, let prefix = configuration.accelRedirect,
      let (file, tag, format) = redirected.file(memoryKey),
      access(images.cacheFolder.path + "/" + file, F_OK) == 0
    {
      return Self.accelResponse(prefix + file, tag: tag, format: format, immutable: true)
    }
    if versioned, configuration.accelRedirect == nil,
      let (rendition, tag) = images.remembered(memoryKey)
    {
      return Self.representationResponse(rendition, tag: "\"\(tag)\"", immutable: true, request)
    }
    let id = try Self.assetID(context)
    if context.parameters.get("rep") == "exif-thumbnail" {
      return try await exifThumbnail(id, request)
    }
    if context.parameters.get("rep") == "video" {
      return try await motionVideo(id, request)
    }
    // `delivery` is checked whatever the representation (it is playback's alone).
    let delivery = try Self.delivery(request)
    if context.parameters.get("rep") == "playback" {
      var headers = HTTPFields()
      headers[.cacheControl] = "no-cache"
      return try await Self.playback(library, id, delivery, request, headers: headers)
    }
    let asked = try Self.renditionSpec(context, request)
    let asset = try library.asset(id)
    let spec = asked.shownInBrowser(sourceFormat: asset.format, acceptsWebP: webP)
    let tag = "\"" + Images.tag(asset, spec) + "\""
    let immutable = request.query["v"].map { $0 == asset.version } == true
    if Self.notModified(request, tag) {
      return Self.representationResponse(nil, tag: tag, immutable: immutable, request)
    }
    // A video's full representation is its file, sent as it is read (a player asks for
    // ranges); so is a camera RAW's unless a format is asked (the original a RAW developer
    // wants; no browser shows it).
    if spec.representation == .full,
      asset.mediaType == .video || (asset.format == "raw" && asked.format == nil)
    {
      var headers: HTTPFields = [.eTag: tag]
      headers[.cacheControl] = immutable ? "public, max-age=31536000, immutable" : "no-cache"
      return try await Self.assetBytes(library, asset, request, headers: headers)
    }
    if let prefix = configuration.accelRedirect, spec.representation != .full,
      let file = images.cachedFile(of: asset, spec),
      let format = ImageFormat(fileExtension: (file as NSString).pathExtension)
    {
      if immutable { redirected.keep(memoryKey, file: file, tag: tag, format: format) }
      return Self.accelResponse(prefix + file, tag: tag, format: format, immutable: immutable)
    }
    let rendition = try await images.image(
      of: asset, spec, alsoKeepAs: immutable ? memoryKey : nil)
    var response = Self.representationResponse(rendition, tag: tag, immutable: immutable, request)
    // An edit that landed while this was read may have given it the new pixels (the engine
    // waits for the edit's catalog update rather than refuse): none of it is kept anywhere
    // under the old version's tag and address.
    if response.status == .ok, (try? library.asset(id))?.contentHash != asset.contentHash {
      response.headers[.eTag] = nil
      response.headers[.cacheControl] = "no-store"
    }
    return response
  }

  /// A representation of a space's asset: rendered from memory and cached in the space
  /// (sealed), kept by no address, and `no-store` for the browser; its `full` is the asset's
  /// bytes as stored (its edit's result, or its original), whatever their format.
  func sealedRepresentation(
    _ request: Request, _ context: DarkroomRequestContext, _ scope: AssetScope
  ) async throws -> Response {
    let (library, id) = (try scope.library(context), try Self.assetID(context))
    let noStore: HTTPFields = [.cacheControl: "no-store"]
    if context.parameters.get("rep") == "exif-thumbnail" {
      // (What the library says of a space's: it keeps none.)
      _ = try library.exifThumbnail(of: try library.asset(id))
    }
    let delivery = try Self.delivery(request)
    if context.parameters.get("rep") == "video" {
      return try await Self.motionVideo(library, id, request, headers: noStore)
    }
    if context.parameters.get("rep") == "playback" {
      return try await Self.playback(library, id, delivery, request, headers: noStore)
    }
    let asset = try await blocking { () throws(DarkroomError) in try library.asset(id) }
    var spec = try Self.renditionSpec(context, request).shownInBrowser(
      sourceFormat: asset.format, acceptsWebP: Self.acceptsWebP(request))
    if spec.representation == .full {
      guard request.query["size"] == nil, request.query["format"] == nil else {
        throw APIError.badRequest("full is the asset as it is: it takes no size or format")
      }
      return try await Self.assetBytes(library, asset, request, headers: noStore)
    }
    spec.metadata = .strip
    let rendition = try await images.image(of: asset, spec, in: library)
    var headers = noStore
    headers[.contentType] = Self.mediaType(rendition.format)
    headers[.vary] = "Accept"
    headers[.contentLength] = String(rendition.bytes.count)
    return Response(
      status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: rendition.bytes)))
  }

  /// A rendition the front server sends from the cache (`X-Accel-Redirect` to `location`),
  /// with the headers it keeps (type, caching); it adds its own validator.
  static func accelResponse(
    _ location: String, tag: String, format: ImageFormat, immutable: Bool
  ) -> Response {
    var headers: HTTPFields = [.eTag: tag, .contentType: mediaType(format), .vary: "Accept"]
    headers[.cacheControl] = immutable ? "public, max-age=31536000, immutable" : "no-cache"
    headers[.accelRedirect] = location
    return Response(status: .ok, headers: headers)
  }

  /// A video every browser plays (``Library/playbackStream(of:quality:)``), at `quality`: a
  /// video asset's, or a live or motion photo's. A rendition not made yet is streamed as it
  /// is made; a made one is answered with ranges as `full` is.
  static func playback(
    _ library: Library, _ id: AssetID, _ quality: PlaybackQuality, _ request: Request,
    headers: HTTPFields
  ) async throws -> Response {
    let stream = try await blocking { () throws(DarkroomError) in
      try library.playbackStream(of: id, quality: quality)
    }
    var headers = headers
    switch stream {
    case .ready(let playback):
      return try await Self.sendBytes(
        count: playback.byteSize, contentType: playback.mediaType, request, headers: headers
      ) { [library] part throws(DarkroomError) in
        try library.playbackBytes(playback, part: part)
      }
    case .growing(let growing):
      // Being made: its bytes as they are written (a fragmented MP4 plays from its first
      // fragment), whole, with no length; a range (a player's seek) as soon as its bytes are
      // written, its size `*` until the rendition is whole.
      headers[.contentType] = growing.mediaType
      switch request.headers[.range].map(Self.growingRange) ?? .fromStart {
      case .fromStart: break
      case .part(let start, let end):
        let (bytes, total) = try await growing.part(from: start, through: end)
        guard !bytes.isEmpty else { throw unsatisfiable(total ?? start) }
        headers[.contentRange] =
          "bytes \(start)-\(start + bytes.count - 1)/\(total.map(String.init) ?? "*")"
        headers[.contentLength] = String(bytes.count)
        return Response(
          status: .partialContent, headers: headers,
          body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
      case .atTheEnd:
        // A suffix needs the size: answered once the rendition is whole.
        let made = try await growing.whole()
        return try await Self.sendBytes(
          count: made.byteSize, contentType: made.mediaType, request, headers: headers
        ) { [library] part throws(DarkroomError) in
          try library.playbackBytes(made, part: part)
        }
      }
      // Its first bytes, or its failure (a damaged video's 422), before the response starts.
      let first = try await growing.read(from: 0, count: 1 << 20)
      let body = ResponseBody { writer in
        var (bytes, offset) = (first, 0)
        while !bytes.isEmpty {
          try await writer.write(ByteBuffer(bytes: bytes))
          offset += bytes.count
          bytes = try await growing.read(from: offset, count: 1 << 20)
        }
        try await writer.finish(nil)
      }
      return Response(status: .ok, headers: headers, body: body)
    }
  }

  /// The `delivery` a request asks a playback at (medium unless it says); 400 for another.
  static func delivery(_ request: Request) throws -> PlaybackQuality {
    guard let asked = request.query["delivery"] else { return .medium }
    guard let quality = PlaybackQuality(rawValue: String(asked)) else {
      throw APIError.badRequest("delivery takes fast, medium or high; not \(asked.prefix(64))")
    }
    return quality
  }

  /// The video of a live or motion photo, as it is (a Live Photo's MOV, a motion photo's
  /// MP4), with ranges, as a video's `full` is sent; 404 for an asset without one.
  func motionVideo(_ id: AssetID, _ request: Request) async throws -> Response {
    var headers = HTTPFields()
    headers[.cacheControl] = "no-cache"
    return try await Self.motionVideo(library, id, request, headers: headers)
  }

  /// The video of a live or motion photo of `library` (a folder's or a space's), with
  /// ranges, with `headers` (caching) added.
  static func motionVideo(
    _ library: Library, _ id: AssetID, _ request: Request, headers: HTTPFields
  ) async throws -> Response {
    let (video, size) = try await blocking { () throws(DarkroomError) in
      (try library.motionVideo(of: id), try library.motionVideoSize(of: id))
    }
    return try await Self.sendBytes(
      count: size, contentType: video.mediaType, request, headers: headers
    ) { [library] part throws(DarkroomError) in
      try library.motionVideoBytes(of: id, part: part)
    }
  }

  /// The JPEG thumbnail the camera embedded, as the file holds it (what the gallery shows
  /// until the photo's own thumbnail is made): one read, nothing decoded.
  func exifThumbnail(_ id: AssetID, _ request: Request) async throws -> Response {
    let (asset, bytes) = try await blocking { [library] () throws(DarkroomError) in
      let asset = try library.asset(id)
      return (asset, try library.exifThumbnail(of: asset))
    }
    let version = asset.version
    let tag = "\"\(version)-exif\""
    let immutable = request.query["v"].map { String($0) == version } == true
    return Self.representationResponse(
      Rendition(bytes: bytes, format: .jpeg, width: 0, height: 0), tag: tag,
      immutable: immutable, request)
  }

  /// The representation a request's path names (404 for none), with its `size` and `format`.
  /// Only `full` keeps the file's metadata: a thumbnail carries no location.
  static func renditionSpec(_ context: DarkroomRequestContext, _ request: Request) throws
    -> RenditionSpec
  {
    let name = context.parameters.get("rep") ?? ""
    guard let representation = Representation(rawValue: name) else {
      throw APIError.notFound(
        "no representation \(name.prefix(64)): full, fullscreen, thumbnail, aspect-thumbnail, exif-thumbnail, video or playback"
      )
    }
    var spec = RenditionSpec(representation)
    let query = request.query
    // A signed address's expiry (read by the signature's check): seconds, in digits.
    if let text = query["e"], !SignedAddresses.isExpiry(text) {
      throw APIError.badRequest("e takes seconds since 1970, in digits; not \(text.prefix(32))")
    }
    if let text = query["size"] {
      guard let size = Int(text), (16...4096).contains(size) else {
        throw APIError.badRequest("size takes 16 to 4096; not \(text.prefix(32))")
      }
      if representation == .fullscreen {
        (spec.screenWidth, spec.screenHeight) = (size, size)
      } else {
        spec.size = size
      }
    }
    if let text = query["format"] {
      guard let format = ImageFormat(rawValue: String(text)),
        RenditionSpec.browserFormats.contains(format)
      else {
        throw APIError.badRequest("format takes jpeg, png or webp; not \(text.prefix(32))")
      }
      spec.format = format
    }
    if let text = query["original"] {
      switch text {
      case "true", "1": spec.foreignEdit = .hidden
      case "false", "0": break
      default: throw APIError.badRequest("original takes true or false; not \(text.prefix(32))")
      }
    }
    if representation != .full { spec.metadata = .strip }
    return spec
  }

  /// 416 for a range outside `count` bytes.
  static func unsatisfiable(_ count: Int) -> APIError {
    var error = APIError(.rangeNotSatisfiable, "range", "the range is outside the \(count) bytes")
    error.headers[.contentRange] = "bytes */\(count)"
    return error
  }

  static func notModified(_ request: Request, _ tag: String) -> Bool {
    guard let match = request.headers[.ifNoneMatch] else { return false }
    return match == "*"
      || match.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == tag }
  }

  /// The asset as it is (the edit's result, or the original; a video's file), with `Range`
  /// requests answered by reading (in a space, decrypting) only the bytes they cover.
  static func assetBytes(
    _ library: Library, _ asset: Asset, _ request: Request, headers: HTTPFields
  ) async throws -> Response {
    let size = try await blocking { () throws(DarkroomError) in try library.byteCount(of: asset.id)
    }
    let id = asset.id
    return try await sendBytes(
      count: size, contentType: contentType(of: asset), request, headers: headers
    ) { part throws(DarkroomError) in
      try library.bytes(of: id, range: part)
    }
  }

  /// `count` bytes, as `read` gives them, whole or the one range the request asks for; past
  /// 4 MB a megabyte at a time as they go out (a player's `bytes=0-` of a long video is never
  /// held whole).
  static func sendBytes(
    count size: Int, contentType: String, _ request: Request, headers: HTTPFields,
    read: @escaping @Sendable (Range<Int>) throws(DarkroomError) -> [UInt8]
  ) async throws -> Response {
    var headers = headers
    headers[.acceptRanges] = "bytes"
    headers[.contentType] = contentType
    var range = 0..<size
    var status = HTTPResponse.Status.ok
    if let header = request.headers[.range] {
      switch byteRange(header, count: size) {
      case .whole: break
      case .part(let part):
        range = part
        status = .partialContent
        headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(size)"
      case .unsatisfiable: throw unsatisfiable(size)
      }
    }
    headers[.contentLength] = String(range.count)
    // A video of gigabytes (and a player's `bytes=0-`) is sent a chunk at a time, read (in a
    // space, decrypted) as it goes out, never held whole.
    let chunk = 1 << 20
    if range.count <= 4 * chunk {
      let part = range
      let bytes = try await blocking { () throws(DarkroomError) in try read(part) }
      return Response(
        status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
    let whole = range
    let body = ResponseBody(contentLength: whole.count) { writer in
      for start in stride(from: whole.lowerBound, to: whole.upperBound, by: chunk) {
        let part = start..<min(start + chunk, whole.upperBound)
        let bytes = try await blocking { () throws(DarkroomError) in try read(part) }
        try await writer.write(ByteBuffer(bytes: bytes))
      }
      try await writer.finish(nil)
    }
    return Response(status: status, headers: headers, body: body)
  }

  /// The media type of an asset's own bytes.
  static func contentType(of asset: Asset) -> String {
    if let format = ImageFormat(sourceFormat: asset.format) { return mediaType(format) }
    switch asset.format {
    case "mp4": return "video/mp4"
    case "mov": return "video/quicktime"
    case "m4v": return "video/x-m4v"
    case "3gp": return "video/3gpp"
    default: return "application/octet-stream"
    }
  }

  /// A representation's response: 304 for a matching `If-None-Match` (or no rendition), a
  /// `Range` of a `full` one, or the whole.
  static func representationResponse(
    _ rendition: Rendition?, tag: String, immutable: Bool, _ request: Request
  ) -> Response {
    var headers: HTTPFields = [.eTag: tag]
    headers[.cacheControl] = immutable ? "public, max-age=31536000, immutable" : "no-cache"
    let full = request.uri.path.hasSuffix("/full")
    if full { headers[.acceptRanges] = "bytes" } else { headers[.vary] = "Accept" }
    guard let rendition, !notModified(request, tag) else {
      return Response(status: .notModified, headers: headers)
    }
    headers[.contentType] = mediaType(rendition.format)
    var bytes = rendition.bytes[...]
    var status = HTTPResponse.Status.ok
    if full, let range = request.headers[.range] {
      switch byteRange(range, count: bytes.count) {
      case .whole: break
      case .part(let part):
        status = .partialContent
        headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(bytes.count)"
        bytes = bytes[part]
      case .unsatisfiable:
        return ErrorMiddleware.response(unsatisfiable(bytes.count))
      }
    }
    headers[.contentLength] = String(bytes.count)
    return Response(
      status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
  }

  /// Whether the request's `Accept` lists `image/webp` (with a quality above 0).
  static func acceptsWebP(_ request: Request) -> Bool {
    guard let accept = request.headers[.accept] else { return false }
    return accept.split(separator: ",").contains { item in
      let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
      guard parts.first?.lowercased() == "image/webp" else { return false }
      let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap {
        Double($0.dropFirst(2))
      }
      return (quality ?? 1) > 0
    }
  }

  static func mediaType(_ format: ImageFormat) -> String {
    switch format {
    case .jpeg: "image/jpeg"
    case .png: "image/png"
    case .webp: "image/webp"
    case .avif: "image/avif"
    case .heic: "image/heic"
    case .tiff: "image/tiff"
    }
  }

  /// A range of a rendition still being made, whose size is not known yet.
  enum GrowingRange: Equatable {
    /// The whole, from its start (`bytes=0-`, no range, or one not understood).
    case fromStart
    /// `bytes=A-B`, or `bytes=A-` (A > 0: a player's seek).
    case part(start: Int, end: Int?)
    /// `bytes=-N`: its last N bytes.
    case atTheEnd
  }

  /// One `bytes=` range of a rendition still being made (several ranges, or a form not
  /// understood, are answered with the whole).
  static func growingRange(_ header: String) -> GrowingRange {
    guard header.hasPrefix("bytes="), !header.contains(",") else { return .fromStart }
    let parts = header.dropFirst(6).split(
      separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2 else { return .fromStart }
    if parts[0].isEmpty { return parts[1].isEmpty ? .fromStart : .atTheEnd }
    guard let start = Int(parts[0]), start >= 0 else { return .fromStart }
    if parts[1].isEmpty { return start == 0 ? .fromStart : .part(start: start, end: nil) }
    guard let end = Int(parts[1]), end >= start else { return .fromStart }
    return .part(start: start, end: end)
  }

  enum ByteRange: Equatable {
    case whole
    case part(Range<Int>)
    case unsatisfiable
  }

  /// One `bytes=` range of `count` bytes (several ranges, or a form not understood, are
  /// answered with the whole).
  static func byteRange(_ header: String, count: Int) -> ByteRange {
    guard header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
    let parts = header.dropFirst(6).split(
      separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2 else { return .whole }
    let (first, last) = (Int(parts[0]), Int(parts[1]))
    switch (parts[0].isEmpty, parts[1].isEmpty) {
    case (true, false):
      guard let suffix = last, suffix > 0 else { return .unsatisfiable }
      return .part(max(0, count - suffix)..<count)
    case (false, _):
      guard let start = first, start < count else { return .unsatisfiable }
      let end = parts[1].isEmpty ? count - 1 : min(count - 1, last ?? -1)
      guard end >= start else { return .unsatisfiable }
      return .part(start..<(end + 1))
    default: return .whole
    }
  }

  // MARK: Selections

  /// The ids a selection names: a list, or a query ("all of this album") less some.
  func ids(in selection: Selection) async throws -> [AssetID] {
    if let ids = selection.ids {
      guard ids.count <= 100_000 else { throw APIError.badRequest("at most 100,000 ids") }
      return try Selection.assetIDs(ids)
    }
    guard let parameters = selection.query else {
      throw APIError.badRequest("a selection takes ids (a list) or query (list parameters)")
    }
    for name in parameters.keys where !AssetQuery.parameterNames.contains(name) {
      throw APIError.badRequest("unknown query parameter \(name)")
    }
    let query = try AssetQuery(
      parameters: parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    let except = Set((selection.except ?? []).compactMap(AssetID.init))
    let ids = try await blocking { [library] () throws(DarkroomError) in
      try library.assetIDs(matching: query)
    }
    return except.isEmpty ? ids : ids.filter { !except.contains($0) }
  }

  // MARK: Upload and download

  func upload(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let folder = request.query["folder"].map(String.init)
    let (asset, added) = try await Self.add(request, to: library, into: folder, configuration)
    return try Self.encode(
      APIUpload(status: added ? "added" : "duplicate", asset: APIAsset(asset)),
      status: added ? .created : .ok)
  }

  /// A request's body added to `library` as it arrives (``Library/add(streaming:length:name:into:limits:)``):
  /// the upload route of a folder's library and of a space.
  static func add(
    _ request: Request, to library: Library, into folder: String?,
    _ configuration: ServerConfiguration
  ) async throws -> (asset: Asset, added: Bool) {
    let name = try uploadName(request)
    let length = request.headers[.contentLength].flatMap(Int.init)
    let body = request.body.map { @Sendable buffer in Array(buffer: buffer) }
    return try await library.add(
      streaming: body, length: length, name: name, into: folder,
      limits: configuration.uploadLimits)
  }

  /// An upload's `name` (400 without one).
  static func uploadName(_ request: Request) throws -> String {
    guard let name = request.query["name"].map(String.init), !name.isEmpty else {
      throw APIError.badRequest("name (the file's name) is required")
    }
    return name
  }

  func download(_ request: Request, _ context: DarkroomRequestContext) async throws -> Response {
    let body = try await request.body.collect(upTo: context.maxUploadSize)
    let selection: Selection
    if request.headers[.contentType]?.hasPrefix(AccessMiddleware.formType) == true {
      selection = Selection(form: AccessMiddleware.formPairs(String(buffer: body)))
    } else {
      selection = try JSONDecoder().decode(Selection.self, from: Data(buffer: body))
    }
    let ids = try await ids(in: selection)
    let export = try await blocking { [library] () throws(DarkroomError) in
      try library.zipExport(of: ids)
    }
    let headers: HTTPFields = [
      .contentType: "application/zip",
      .contentDisposition: "attachment; filename=\"\(export.fileName)\"",
      .cacheControl: "no-store",
    ]
    return Response(
      status: .ok, headers: headers,
      body: ResponseBody { writer in
        try await export.write { bytes in try await writer.write(ByteBuffer(bytes: bytes)) }
        try await writer.finish(nil)
      })
  }

  // MARK: Change feed

  /// The library's change log as server-sent events, each with its sequence number as its
  /// id, from `since` (or `Last-Event-ID`; the latest if neither); `follow=false` ends once
  /// caught up.
  func changeFeed(_ request: Request) throws -> Response {
    let query = request.query
    var since: Int64? = nil
    if let text = request.headers[.lastEventID] ?? query["since"].map(String.init) {
      guard let value = Int64(text), value >= 0 else {
        throw APIError.badRequest("since takes a change's sequence number; not \(text.prefix(32))")
      }
      since = value
    }
    let follow = query["follow"].map { $0 != "false" && $0 != "0" } ?? true
    let start = try since ?? library.lastChange()
    let feed = try library.changeFeed(
      since: start, follow: follow, interval: configuration.changePollInterval)
    return Self.eventStream { writer in
      try await writer.comment("from \(start)")
      var quiet = ContinuousClock.now
      for try await changes in feed {
        for change in changes {
          try await writer.event("change", Self.jsonText(change), id: String(change.sequence))
        }
        if Task.isShuttingDownGracefully { break }
        if ContinuousClock.now - quiet > .seconds(15) {
          try await writer.comment("still here")
          quiet = .now
        }
      }
    }
  }

  // MARK: Encoding

  static func encode(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response
  {
    let bytes = try jsonBytes(value)
    return Response(
      status: status,
      headers: [
        .contentType: json, .cacheControl: "no-store", .contentLength: String(bytes.count),
      ],
      body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
  }

  static func jsonBytes(_ value: some Encodable) throws -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return Array(try encoder.encode(value))
  }

  static func jsonText(_ value: some Encodable) throws -> String {
    String(decoding: try jsonBytes(value), as: UTF8.self)
  }

  static func optionalBody<T: Decodable>(
    _ type: T.Type, _ request: Request, _ context: DarkroomRequestContext
  ) async throws -> T? {
    let body = try await request.body.collect(upTo: context.maxUploadSize)
    guard body.readableBytes > 0 else { return nil }
    return try JSONDecoder().decode(T.self, from: Data(buffer: body))
  }

  /// A `text/event-stream` response written by `body`.
  static func eventStream(
    _ body: @escaping @Sendable (inout EventWriter) async throws -> Void
  ) -> Response {
    Response(
      status: .ok,
      headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
      body: ResponseBody { writer in
        var events = EventWriter(writer: writer)
        try await body(&events)
        try await events.writer.finish(nil)
      })
  }
}

/// Writes server-sent events.
struct EventWriter {
  var writer: any ResponseBodyWriter

  mutating func event(_ name: String, _ data: String, id: String? = nil) async throws {
    var text = id.map { "id: \($0)\n" } ?? ""
    text += "event: \(name)\n"
    for line in data.split(separator: "\n", omittingEmptySubsequences: false) {
      text += "data: \(line)\n"
    }
    try await writer.write(ByteBuffer(string: text + "\n"))
  }

  mutating func comment(_ text: String) async throws {
    try await writer.write(ByteBuffer(string: ": \(text)\n\n"))
  }
}

/// Versioned representation URLs a front server was sent to the cache for: the next request
/// for one is redirected again without a catalog or cache lookup (its file is only checked
/// to be still there). Bounded: emptied when full.
final class RedirectMemory: Sendable {
  private let files = Locked<[String: (String, String, ImageFormat)]>([:])
  private static let bound = 100_000

  func file(_ key: String) -> (file: String, tag: String, format: ImageFormat)? {
    files.withLock { $0[key] }
  }

  func keep(_ key: String, file: String, tag: String, format: ImageFormat) {
    files.withLock { files in
      if files.count >= Self.bound { files.removeAll(keepingCapacity: true) }
      files[key] = (file, tag, format)
    }
  }
}
