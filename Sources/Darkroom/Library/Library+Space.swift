import FoundationEssentials

/// A library over an encrypted space (``Library/init(space:)``): the same calls as a
/// folder's, each of which comes here for what only the storage does differently. A space's
/// originals, edits and renditions are sealed objects, decrypted into memory and never
/// written in the clear; its catalog is ``SealedCatalog``.
///
/// ```swift
/// let library = try Library.open(space: "Private", password: Array("correct horse".utf8))
/// let (asset, _) = try library.add(file: "IMG_0001.jpg")
/// try await library.edit(asset.id, with: try FilterGraph.parse(spec: "noir"))
/// let screen = try await library.image(for: asset.id, RenditionSpec(.fullscreen))
/// library.close()
/// ```
extension Library {
  /// The library over the space that `password` opens in `folder`.
  ///
  /// - Throws: what ``Space/open(_:password:)`` throws ("no space opens with this
  ///   password", whatever the folder holds).
  public static func open(space folder: String, password: [UInt8]) throws(DarkroomError)
    -> Library
  {
    Library(space: try Space.open(folder, password: password))
  }

  /// A new encrypted space in `folder` (made if missing), opened with `password`, as a
  /// library: ``add(file:move:into:)`` puts photos in it, and every other call works on it as on
  /// a folder's library until ``close()`` locks it.
  ///
  /// - Throws: `invalidArgument` when the password is empty or already opens a space there;
  ///   `io` when the folder cannot be written.
  public static func create(space folder: String, password: [UInt8]) throws(DarkroomError)
    -> Library
  {
    Library(space: try Space.create(at: folder, password: password))
  }

  /// Locks a library over a space (its keys are zeroed; see ``Space/close()``); nothing for
  /// a folder.
  public func close() { space?.close() }

  /// The space's row of an asset of this library.
  /// - Throws: "the space is locked" once it is (not that the asset is missing).
  func sealed(_ id: AssetID, in space: Space) throws(DarkroomError) -> SpaceAsset {
    guard !space.isClosed else { throw Space.closedError(space.folder) }
    guard let asset = space.asset(id: SpaceAsset.spaceID(id)) else { throw storage.missing(id) }
    return asset
  }

  /// The asset of a space that `reference` names: its id (or the 32 hex digits a space's
  /// ids were shown as before), or its name when one asset has it.
  ///
  /// - Throws: `notFound` for none; `invalidArgument` for a name several assets have.
  func sealedID(_ reference: String, in space: Space) throws(DarkroomError) -> AssetID {
    if let id = AssetID(reference), space.asset(id: SpaceAsset.spaceID(id)) != nil { return id }
    let asset = try space.asset(reference)
    guard let id = SpaceAsset.assetID(asset.id) else {
      throw DarkroomError(.corrupt, file: asset.name, "its id in the space is not 128 bits")
    }
    return id
  }

  // MARK: Reading

  /// The size in bytes of the asset as it is now (the edit's result, or the original).
  ///
  /// - Throws: `notFound` for an unknown id; `io` for a file or object that cannot be read.
  package func byteCount(of id: AssetID) throws(DarkroomError) -> Int {
    try storage.byteCount(of: id)
  }

  /// Bytes `range` of the asset as it is now (all of them for nil); a space decrypts only
  /// the chunks the range is in.
  ///
  /// - Throws: as ``byteCount(of:)``; `invalidArgument` for a range past the end.
  package func bytes(of id: AssetID, range: Range<Int>? = nil) throws(DarkroomError) -> [UInt8] {
    try storage.bytes(of: id, range: range)
  }

  /// ``bytes(of:range:)`` of a folder's file.
  func fileBytes(of id: AssetID, range: Range<Int>?) throws(DarkroomError) -> [UInt8] {
    let file = try openFile(of: asset(id))
    let range = range ?? 0..<Int(file.size)
    guard range.upperBound <= Int(file.size) else {
      throw DarkroomError(.invalidArgument, file: file.path, "the range \(range) is past its end")
    }
    return try file.read(at: range.lowerBound, count: range.count)
  }

  /// Writes the asset as it is now into `folder` (made, with its parents, if it is not
  /// there) under its name (or the first free "name-2.ext"), never over a file.
  ///
  /// - Returns: the path written.
  /// - Throws: as `bytes(of:range:)`; `io` when `folder` cannot be made (a file in the
  ///   way) or written.
  public func export(_ id: AssetID, to folder: String) throws(DarkroomError) -> String {
    let name = try asset(id).name
    try makeExportFolder(folder)
    return try AtomicFile.writeNew(bytes(of: id), name: FileNames.safe(name), in: folder)
  }

  /// Makes `folder` (and its parents) for ``export(_:to:)``, before the first asset is
  /// decrypted: a file in the way is said once, not for each asset.
  package func makeExportFolder(_ folder: String) throws(DarkroomError) {
    try Folders.create(folder)
  }

  // MARK: Editing, in the space

  /// An edit of a space's asset, as a job's item does it.
  func editSealed(
    _ id: AssetID, in space: Space, _ graph: FilterGraph, _ mode: EditMode,
    _ settings: PixelSettings, keepEncoding: @escaping @Sendable () -> Bool = { true },
    _ outcome: inout BatchOutcome
  ) throws(DarkroomError) {
    let asset = try sealed(id, in: space)
    guard !asset.trashed else { throw inTrash(asset) }
    var graph = graph
    if mode == .foreign && asset.isVideo {
      throw DarkroomError(
        .invalidArgument, file: asset.name, "a video carries no other program's edit to render")
    }
    if mode == .foreign {
      // A sealed original has no sidecars: its own XMP only.
      let original = try space.original(asset)
      graph = try Editor.foreignGraph(
        space.readMetadata(.data(original, name: asset.name)), sidecarsOf: nil, file: asset.name)
    }
    let edited = try makeSealedEdit(
      asset, in: space, graph: graph, append: mode == .append, settings: settings,
      keepEncoding: keepEncoding)
    outcome.version = edited.editVersion
    outcome.adjustment = try space.history(edited).last
    outcome.output = edited.name
  }

  /// A revert of a space's asset to its original (a space keeps no versions between the
  /// original and its current edit: `version` must be nil or 0).
  func revertSealed(
    _ id: AssetID, in space: Space, to version: Int?, _ outcome: inout BatchOutcome
  ) throws(DarkroomError) {
    let asset = try sealed(id, in: space)
    outcome.output = asset.name
    guard !asset.trashed else { throw inTrash(asset) }
    // The outcome is told from what the space held under its write lock (which also clears
    // what a writer killed before its commit left), not from the row read before it.
    if let version, version > 0 {
      guard version == asset.editVersion else {
        throw DarkroomError(
          .invalidArgument, file: asset.name,
          "a space keeps only the original and the current edit: it reverts to the original")
      }
      (outcome.status, outcome.reverted, outcome.version) = (
        .skipped, .alreadyAtVersion(version), version
      )
      return
    }
    let (before, after) = try space.revert(asset)
    outcome.version = after.editVersion
    outcome.reverted = before.editVersion > 0 ? .restoredOriginal(sha256: "") : .notEdited
    if before.editVersion == 0 { outcome.status = .skipped }
  }

  private func inTrash(_ asset: SpaceAsset) -> DarkroomError {
    DarkroomError(.conflict, file: asset.name, "is in the trash: restore it first")
  }

  /// Moves a space's assets to its trash or back, as a folder's ``trash(_:)`` and
  /// ``restore(_:)`` do theirs (the same errors for an asset already there).
  func moveSealed(_ ids: [AssetID], in space: Space, trashing: Bool) throws(DarkroomError)
    -> [Asset]
  {
    var assets: [SpaceAsset] = []
    for id in ids {
      let asset = try sealed(id, in: space)
      guard asset.trashed != trashing else {
        throw DarkroomError(
          .invalidArgument, file: id.rawValue,
          trashing ? "is in the trash already" : "is not in the trash")
      }
      assets.append(asset)
    }
    try space.setTrashed(assets, trashing)
    return try ids.map { id throws(DarkroomError) in try sealed(id, in: space).asset }
  }

  /// The edit history of a space's asset: a space keeps its edits up to the current one.
  func sealedHistory(_ id: AssetID, in space: Space) throws(DarkroomError) -> EditHistory {
    let asset = try sealed(id, in: space)
    return EditHistory(versions: try space.history(asset), current: asset.editVersion)
  }
}
