import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Descriptions, ratings and keywords written where other tools read them: the sidecar
/// `NAME.EXT.xmp` beside the photo (exiftool, darktable and digiKam read it back). The photo's
/// bytes, mode and times are never touched. The sidecar as it was before each change is kept
/// in the library's store of originals, and the catalog reads the photo again at once.
extension Library {
  /// Writes `change` to the sidecars of the assets `ids` and reads them into the catalog
  /// again (the change log says they changed).
  ///
  /// - Returns: The assets as the catalog now has them, in the order of `ids` (a change of
  ///   nothing writes nothing).
  /// - Throws: `invalidArgument` for a change that cannot be written (``MetadataEdit/validate()``)
  ///   or a space (it keeps no sidecars); `conflict` for an asset in the trash; `notFound` for
  ///   an unknown id or an asset offline; `corrupt` naming a sidecar Darkroom cannot read (it is left as it is);
  ///   `io` when the sidecar or the catalog cannot be written.
  @discardableResult
  package func writeMetadata(_ change: MetadataEdit, to ids: [AssetID]) throws(DarkroomError)
    -> [Asset]
  {
    try change.validate()
    try require(.sidecars)
    // Nothing to change writes nothing (a PATCH of `{}`), and answers the assets as they are.
    if change.isEmpty {
      return try ids.map { id throws(DarkroomError) in try asset(id) }
    }
    var assets: [Asset] = []
    for id in ids {
      let asset = try asset(id)
      let path = try editablePath(asset)  // not through a link, in the trash, or offline
      guard asset.mediaType == .photo else {
        throw DarkroomError(
          .invalidArgument, file: path, "is a video: Darkroom reads no sidecar of a video yet")
      }
      let sidecar = try Self.writeSidecar(of: path, change, store: store)
      try recatalog([path, sidecar])
      assets.append(try self.asset(id))
    }
    return assets
  }

  /// Writes `change` to the sidecar of the file at `path`: through the catalog of the
  /// library that holds it when it is catalogued (as ``writeMetadata(_:to:)``), else beside
  /// the file alone (a library folder holding it still keeps the sidecar's earlier versions).
  ///
  /// - Returns: The file's metadata as it now reads.
  /// - Throws: As ``writeMetadata(_:to:)``, and what reading the file throws.
  @discardableResult
  package static func writeMetadata(_ change: MetadataEdit, toFile path: String)
    throws(DarkroomError) -> AssetMetadata
  {
    try change.validate()
    if change.isEmpty { return try AssetMetadata.read(path: path) }
    if let library = Library.containing(path), library.hasCatalog,
      let asset = try library.asset(atPath: path)
    {
      try library.writeMetadata(change, to: [asset.id])
      return try AssetMetadata.read(path: path)
    }
    _ = try writeSidecar(of: path, change, store: store(forEditOf: path))
    return try AssetMetadata.read(path: path)
  }

  /// Writes the sidecar `PATH.xmp`, under the file's edit lock (two writers never lose each
  /// other's change: the keywords added to or taken from are read under it), keeping the
  /// sidecar as it was in `store` first.
  ///
  /// - Returns: The sidecar's path.
  static func writeSidecar(of path: String, _ change: MetadataEdit, store: OriginalStore)
    throws(DarkroomError) -> String
  {
    let sidecar = path + ".xmp"
    return try store.withLock(for: path) { () throws(DarkroomError) -> String in
      let currentKeywords =
        change.changesKeywords && change.keywords == nil
        ? try AssetMetadata.readUnplaced(.file(path)).keywords : []
      var info = stat()
      var existing: [UInt8]?
      if lstat(sidecar, &info) == 0 {
        guard info.st_mode & S_IFMT == S_IFREG else {
          throw DarkroomError(
            .invalidArgument, file: sidecar,
            "is not a regular file: Darkroom writes no sidecar through a link or over a folder")
        }
        do throws(DarkroomError) {
          existing = try AssetMetadata.readSidecar(sidecar)
        } catch {
          throw DarkroomError(error.kind, file: sidecar, "\(error.message): it was left as it is")
        }
      }
      let bytes: [UInt8]
      do throws(XMPPacket.Refusal) {
        bytes = try XMPSidecar.updated(existing, with: change, currentKeywords: currentKeywords)
      } catch {
        throw DarkroomError(
          .corrupt, file: sidecar,
          "is not XMP Darkroom can update (\(error.description)): it was left as it is")
      }
      let attributes = FileAttributes(existing == nil ? path : sidecar)
      if let existing {
        try store.keepOriginal(existing, hash: ContentHash.of(bytes: existing), copyingFrom: nil)
      }
      try AtomicFile.write(
        bytes, to: sidecar, durable: true, mode: (attributes?.mode ?? 0o644) & 0o666,
        owner: attributes?.owner)
      return sidecar
    }
  }
}
