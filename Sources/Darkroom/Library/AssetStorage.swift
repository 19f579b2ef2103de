/// Where a library's assets are kept, and so how each is found, read, rendered, moved to the
/// trash and back, and how its history and videos are read: a folder's files with the catalog
/// beside them (``FolderStorage``), or an unlocked space's sealed objects and sealed catalog
/// (``SealedStorage``). `Library` chooses once (``Library/storage``) and its operations call
/// through it, so that they are written once for both.
///
/// What only a folder has (files to scan, sidecars, albums, shared links, the change log) is
/// refused for a space where it is asked for (`notInSpace`): a capability, not a second way.
protocol AssetStorage: Sendable {
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
}

extension Library {
  /// Where this library's assets are kept: its folder, or the space it was opened over.
  var storage: any AssetStorage {
    if let space { return SealedStorage(library: self, space: space) }
    return FolderStorage(library: self)
  }
}

/// A folder's files, the catalog beside them (SQLite in `.darkroom/`, or PostgreSQL), the
/// rendition cache and the originals' store in `.darkroom/`.
struct FolderStorage: AssetStorage {
  let library: Library

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
}

/// An unlocked space: its sealed objects (originals, results, renditions, history) and its
/// sealed catalog, read and written through its keys.
struct SealedStorage: AssetStorage {
  let library: Library
  let space: Space

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
}
