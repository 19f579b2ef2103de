import Foundation

/// Where a library's assets are kept, and so how each is found, read, rendered, moved to the
/// trash and back, and how its history and videos are read: a folder's files with the catalog
/// beside them (``FolderStorage``), or an unlocked space's sealed objects and sealed catalog
/// (``SealedStorage``). `Library` chooses once (``Library/storage``) and its operations call
/// through it, so that they are written once for both.
///
/// What only a folder has (files to scan, sidecars, shared links, the change log: a
/// ``FolderFeature``) is refused by a space where it is asked for (``refusal(_:)``): a
/// capability, not a second way.
protocol AssetStorage: Sendable {
  /// Why `feature` is not kept here (nil where it is): the error every call that needs it
  /// throws, in the same words.
  func refusal(_ feature: FolderFeature) -> DarkroomError?
  /// That it has no asset `id`, in words that name no folder of the server's but a library's
  /// own root (which a server's answers leave out).
  func missing(_ id: AssetID) -> DarkroomError
  /// Whether the library has a catalog yet.
  var hasCatalog: Bool { get }
  /// The catalog of its assets (made when `creating`, for a folder's SQLite file).
  func catalog(creating: Bool) throws(DarkroomError) -> any Catalog
  /// The ids of what a command names: ids, or files (names, for a space) by their asset.
  func ids(_ items: [String]) throws(DarkroomError) -> [AssetID]
  /// The trashed assets `items` name.
  func trashedIDs(_ items: [String]) throws(DarkroomError) -> [AssetID]
  /// Moves assets to the trash (`trashing`) or back.
  func move(_ ids: [AssetID], trashing: Bool) throws(DarkroomError) -> [Asset]
  /// A representation of an asset as it is now, cached where the storage keeps renditions.
  func render(_ id: AssetID, _ spec: RenditionSpec, settings: PixelSettings)
    throws(DarkroomError) -> Rendition
  /// Every version of an asset's edit, and which one it is now.
  func history(of id: AssetID) throws(DarkroomError) -> EditHistory
  /// The asset's original (its edit left out, and any other program's) rendered as `spec`
  /// asks, cached where the storage keeps renditions, the width of the original's display
  /// (a video's frames), and the name its errors give it: what an editor's preview and Auto
  /// start from.
  func original(_ asset: Asset, _ spec: RenditionSpec, settings: PixelSettings)
    throws(DarkroomError) -> (rendition: Rendition, displayWidth: Int, name: String)
  /// The renderer that decodes what comes of an asset's pixels (a preview's, Auto's): a
  /// space's own workers, which decode nothing of anything else's.
  func renderer(_ settings: PixelSettings) -> Renderer
  /// The asset that holds an edit's result written to `output` (a camera RAW's edit is a
  /// file, and an asset, of its own in a folder).
  func resultAsset(of id: AssetID, output: String) -> AssetID
  /// The size of the asset as it is now, and its bytes (a range of them).
  func byteCount(of id: AssetID) throws(DarkroomError) -> Int
  func bytes(of id: AssetID, range: Range<Int>?) throws(DarkroomError) -> [UInt8]
  /// A live or motion photo's video, and its bytes.
  func motionVideo(of id: AssetID) throws(DarkroomError) -> MotionPhoto.Video
  func motionVideoBytes(of id: AssetID, part: Range<Int>?) throws(DarkroomError) -> [UInt8]
  /// What a playback of an asset's video takes, and where its rendition is kept.
  func playbackPlan(of id: AssetID, quality: PlaybackQuality) throws(DarkroomError)
    -> PlaybackPlan
  /// The bytes of a playback rendition the storage keeps itself (`Playback.Source.sealed`).
  func keptPlaybackBytes(of id: AssetID, object: String, part: Range<Int>?)
    throws(DarkroomError) -> [UInt8]
  /// An asset's representation for ``Library/image(for:_:)``: through the library's shared
  /// ``Images`` where renditions may be kept in memory, or rendered by the storage alone.
  func image(for id: AssetID, _ spec: RenditionSpec) async throws(DarkroomError) -> Rendition
  /// An asset's representation through `images` (``Images/image(of:_:alsoKeepAs:)``): a
  /// folder's shows the edit its catalog row names (``RenditionSpec/showing(_:)``); a space's
  /// row names none, and its cached objects are named by the spec as given.
  func image(of asset: Asset, _ spec: RenditionSpec, alsoKeepAs key: String?, in images: Images)
    async throws(DarkroomError) -> Rendition
  /// Puts a photo or video in (``Library/add(file:move:into:)``): a copy of a file, bytes held in
  /// memory, or an upload's pieces as they arrive; into `folder` of a folder's library.
  func add(file path: String, move: Bool, into folder: String?) throws(DarkroomError)
    -> (asset: Asset, added: Bool)
  func add(bytes: [UInt8], name: String, into folder: String?, limits: Upload.Limits)
    throws(DarkroomError) -> (asset: Asset, added: Bool)
  func add<Body: AsyncSequence & Sendable>(
    streaming body: Body, length: Int?, name: String, into folder: String?,
    limits: Upload.Limits
  ) async throws(DarkroomError) -> (asset: Asset, added: Bool) where Body.Element == [UInt8]
  /// One item of a job over the library's assets: its action on asset `id`.
  func perform(_ id: AssetID, by work: LibraryJob.ItemWork, _ outcome: inout BatchOutcome)
    throws(DarkroomError)
}

/// What a library's folder keeps that a space does not. A space refuses each by name when it
/// is asked for (or, where a call has a quiet answer, answers as for none: no shared links,
/// no job records, no cached file to hand a front server).
enum FolderFeature: Sendable {
  case changeLog
  case catalogFile
  /// The asset's file, named.
  case files(String)
  case sidecars
  case presets
  case folders
  /// Folders to put an added file in.
  case subfolders
  case sharedLinks
  case trashFolder
  case nearFingerprints
  /// A camera's JPEG thumbnail read from the file where the scan found it.
  case embeddedThumbnails
  /// Renditions as plain files in the disk cache (what nginx's `X-Accel-Redirect` sends).
  case renditionFiles
  /// Jobs recorded in `.darkroom/jobs/`, to follow and resume.
  case jobRecords
  /// The store of originals and the temporaries `check` reads and sweeps.
  case originalsStore

  /// What a space says it has none of.
  var name: String {
    switch self {
    case .changeLog: "change log"
    case .catalogFile: "catalog file, nor a change log"
    case .files(let name): "files: \(name) is sealed"
    case .sidecars: "sidecars: descriptions, ratings and keywords"
    case .presets: "presets"
    case .folders: "folders to scan"
    case .subfolders: "folders to put files in"
    case .sharedLinks: "shared links"
    case .trashFolder: "trash folder to empty"
    case .nearFingerprints: "fingerprints for near duplicates"
    case .embeddedThumbnails: "embedded thumbnails read from files"
    case .renditionFiles: "renditions kept as plain files"
    case .jobRecords: "job records"
    case .originalsStore: "store of originals"
    }
  }
}

extension Library {
  /// Where this library's assets are kept: its folder, or the space it was opened over.
  var storage: any AssetStorage {
    if let space { return SealedStorage(library: self, space: space) }
    return FolderStorage(library: self)
  }

  /// Throws the storage's refusal of `feature` (a space's: "is an encrypted space: it has
  /// no ..."), or returns where it is kept.
  func require(_ feature: FolderFeature) throws(DarkroomError) {
    if let refusal = storage.refusal(feature) { throw refusal }
  }

  /// Whether the storage keeps `feature`.
  func keeps(_ feature: FolderFeature) -> Bool { storage.refusal(feature) == nil }
}

/// A folder's files, the catalog beside them (SQLite in `.darkroom/`, or PostgreSQL), the
/// rendition cache and the originals' store in `.darkroom/`.
struct FolderStorage: AssetStorage {
  let library: Library

  func refusal(_ feature: FolderFeature) -> DarkroomError? { nil }
  func missing(_ id: AssetID) -> DarkroomError {
    DarkroomError(
      .notFound, file: id.rawValue, "no such asset in the library at \(library.root.path)")
  }
  var hasCatalog: Bool {
    FileManager.default.fileExists(atPath: library.catalogPath)
      || FileManager.default.fileExists(atPath: library.catalogLocationFile)
  }
  func catalog(creating: Bool) throws(DarkroomError) -> any Catalog {
    try library.folderCatalog(creating: creating)
  }
  func ids(_ items: [String]) throws(DarkroomError) -> [AssetID] {
    try library.fileIDs(items)
  }
  func trashedIDs(_ items: [String]) throws(DarkroomError) -> [AssetID] {
    try library.trashedFileIDs(items)
  }
  func move(_ ids: [AssetID], trashing: Bool) throws(DarkroomError) -> [Asset] {
    trashing ? try library.trashFiles(ids) : try library.restoreFiles(ids)
  }
  func render(_ id: AssetID, _ spec: RenditionSpec, settings: PixelSettings)
    throws(DarkroomError) -> Rendition
  {
    try library.renderFile(id, spec, settings: settings)
  }
  func history(of id: AssetID) throws(DarkroomError) -> EditHistory {
    try library.fileHistory(id)
  }
  func original(_ asset: Asset, _ spec: RenditionSpec, settings: PixelSettings)
    throws(DarkroomError) -> (rendition: Rendition, displayWidth: Int, name: String)
  {
    let (rendition, width) = try library.fileOriginal(asset, spec, settings: settings)
    return (rendition, width, library.path(of: asset))
  }
  func renderer(_ settings: PixelSettings) -> Renderer { Renderer(settings) }
  func resultAsset(of id: AssetID, output: String) -> AssetID {
    (try? library.asset(atPath: output))?.id ?? id
  }
  func byteCount(of id: AssetID) throws(DarkroomError) -> Int {
    Int(try library.openFile(of: library.asset(id)).size)
  }
  func bytes(of id: AssetID, range: Range<Int>?) throws(DarkroomError) -> [UInt8] {
    try library.fileBytes(of: id, range: range)
  }
  func motionVideo(of id: AssetID) throws(DarkroomError) -> MotionPhoto.Video {
    try library.fileMotionVideo(of: id)
  }
  func motionVideoBytes(of id: AssetID, part: Range<Int>?) throws(DarkroomError)
    -> [UInt8]
  {
    try library.fileMotionVideoBytes(of: id, part: part)
  }
  func playbackPlan(of id: AssetID, quality: PlaybackQuality) throws(DarkroomError)
    -> PlaybackPlan
  {
    try library.filePlaybackPlan(of: id, quality: quality)
  }
  /// (A folder's playback renditions are plain files: `Playback.Source.rendition`.)
  func keptPlaybackBytes(of id: AssetID, object: String, part: Range<Int>?)
    throws(DarkroomError) -> [UInt8]
  {
    throw DarkroomError(.invalidArgument, file: id.rawValue, "is not in a space")
  }
  func image(for id: AssetID, _ spec: RenditionSpec) async throws(DarkroomError) -> Rendition {
    try await Images.shared(library).image(of: library.asset(id), spec)
  }
  func image(of asset: Asset, _ spec: RenditionSpec, alsoKeepAs key: String?, in images: Images)
    async throws(DarkroomError) -> Rendition
  {
    // (The files, disk cache and memory of an `Images` are its own library's.)
    guard images.library.rootPath == library.rootPath, images.library.space == nil else {
      throw DarkroomError(
        .engine, file: library.rootPath, "is not the library this Images renders")
    }
    return try await images.imageOfFile(asset, spec.showing(asset), alsoKeepAs: key)
  }
  func perform(_ id: AssetID, by work: LibraryJob.ItemWork, _ outcome: inout BatchOutcome)
    throws(DarkroomError)
  {
    try work.onAsset(id, in: library, &outcome)
  }
}

/// An unlocked space: its sealed objects (originals, results, renditions, history) and its
/// sealed catalog, read and written through its keys.
struct SealedStorage: AssetStorage {
  let library: Library
  let space: Space

  func refusal(_ feature: FolderFeature) -> DarkroomError? {
    DarkroomError(
      .invalidArgument, file: library.rootPath, "is an encrypted space: it has no \(feature.name)")
  }
  func missing(_ id: AssetID) -> DarkroomError {
    DarkroomError(.notFound, file: id.rawValue, "no such asset in this space")
  }
  /// (Its sealed catalog is made with the space.)
  var hasCatalog: Bool { true }
  func catalog(creating: Bool) throws(DarkroomError) -> any Catalog {
    SealedCatalog(space: space)
  }
  func ids(_ items: [String]) throws(DarkroomError) -> [AssetID] {
    try items.map { item throws(DarkroomError) in try library.sealedID(item, in: space) }
  }
  /// (By id or name, trashed or not: a space's names are its own.)
  func trashedIDs(_ items: [String]) throws(DarkroomError) -> [AssetID] {
    try ids(items)
  }
  func move(_ ids: [AssetID], trashing: Bool) throws(DarkroomError) -> [Asset] {
    try library.moveSealed(ids, in: space, trashing: trashing)
  }
  func render(_ id: AssetID, _ spec: RenditionSpec, settings: PixelSettings)
    throws(DarkroomError) -> Rendition
  {
    try library.renderSealed(id, in: space, spec, settings: settings)
  }
  func history(of id: AssetID) throws(DarkroomError) -> EditHistory {
    try library.sealedHistory(id, in: space)
  }
  /// (Cached in the space, sealed; a video's is its poster. The width is the original's
  /// as the space keeps it: an edited asset's row says its result's.)
  func original(_ asset: Asset, _ spec: RenditionSpec, settings: PixelSettings)
    throws(DarkroomError) -> (rendition: Rendition, displayWidth: Int, name: String)
  {
    let rendition = try library.renderSealed(
      asset.id, in: space, spec, settings: settings, fromOriginal: true)
    return (rendition, try library.sealed(asset.id, in: space).width, asset.name)
  }
  func renderer(_ settings: PixelSettings) -> Renderer {
    space.ownRenderer(Renderer(settings))
  }
  /// (An edit's result is the asset's own sealed object.)
  func resultAsset(of id: AssetID, output: String) -> AssetID { id }
  func byteCount(of id: AssetID) throws(DarkroomError) -> Int {
    try space.currentSize(library.sealed(id, in: space))
  }
  func bytes(of id: AssetID, range: Range<Int>?) throws(DarkroomError) -> [UInt8] {
    let asset = try library.sealed(id, in: space)
    guard let range else { return try space.current(asset) }
    return try space.current(asset, range: range)
  }
  /// (A motion photo's video embedded in its original, as the space's row says; a Live
  /// Photo's MOV is not kept beside a sealed still.)
  func motionVideo(of id: AssetID) throws(DarkroomError) -> MotionPhoto.Video {
    let sealed = try library.sealed(id, in: space)
    guard let range = sealed.motionVideo else { throw MotionPhoto.noVideo(sealed.name) }
    return MotionPhoto.Video(path: sealed.name, range: range, format: "mp4")
  }
  /// (From the sealed original, decrypting only the chunks the part is in.)
  func motionVideoBytes(of id: AssetID, part: Range<Int>?) throws(DarkroomError)
    -> [UInt8]
  {
    let video = try motionVideo(of: id)
    let sealed = try library.sealed(id, in: space)
    let reader = try space.reader(sealed.original, of: sealed)
    return try MotionPhoto.bytes(of: video, size: reader.length, part: part, name: video.path) {
      (offset, count) throws(DarkroomError) in try reader.read(offset..<offset + count)
    }
  }
  func playbackPlan(of id: AssetID, quality: PlaybackQuality) throws(DarkroomError)
    -> PlaybackPlan
  {
    try library.sealedPlaybackPlan(of: id, quality: quality, in: space)
  }
  /// (Decrypting only the chunks `part` is in.)
  func keptPlaybackBytes(of id: AssetID, object: String, part: Range<Int>?)
    throws(DarkroomError) -> [UInt8]
  {
    try space.playbackBytes(object, of: try library.sealed(id, in: space), part: part)
  }
  /// (Not through the library's shared ``Images``, which outlives the space's lock and is
  /// kept by folder, which several spaces share: the space caches its renditions itself,
  /// sealed.)
  func image(for id: AssetID, _ spec: RenditionSpec) async throws(DarkroomError) -> Rendition {
    try await offThread { () throws(DarkroomError) in try library.render(id, spec) }
  }
  func image(of asset: Asset, _ spec: RenditionSpec, alsoKeepAs key: String?, in images: Images)
    async throws(DarkroomError) -> Rendition
  {
    try await images.sealedImage(asset, spec, of: library, space)
  }
  func perform(_ id: AssetID, by work: LibraryJob.ItemWork, _ outcome: inout BatchOutcome)
    throws(DarkroomError)
  {
    try work.onSealedAsset(id, in: library, space, &outcome)
  }
}
