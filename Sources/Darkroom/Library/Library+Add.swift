import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Putting a photo or video into a library, PhotoKit's creation request: into a folder's
/// library, a copy under `Uploads/` (or a folder given), catalogued; into a space, sealed.
/// The same calls for both: the library's storage does what differs.
///
/// ```swift
/// let (asset, added) = try library.add(file: "/media/card/DCIM/IMG_0001.JPG")
/// print(added ? "new" : "the library had it", asset.id)
/// ```
extension Library {
  /// Adds a copy of the file at `path` (into `folder` of a folder's library,
  /// `Uploads/` for nil, never over a file: `name-2.jpg` beside `name.jpg`);
  /// with `move`, the file is removed once the library's copy is durable, and only if it did
  /// not change meanwhile.
  ///
  /// - Returns: the asset, and false when the library had these bytes already (then nothing
  ///   is stored; a moved file is removed all the same).
  /// - Throws: `invalidArgument` for a file inside a folder's library (scan it instead);
  ///   `unsupportedFormat` for what is neither a photo nor a video; what reading its header
  ///   throws; `io` for a failed write, which leaves nothing behind, or for a file that
  ///   changed while it was read (then it is kept where it was); `invalidArgument` for a
  ///   folder outside the library, or any folder in a space; `conflict` for a moved file
  ///   whose bytes the library has as an asset in the trash or changed (it is kept).
  public func add(file path: String, move: Bool = false, into folder: String? = nil)
    throws(DarkroomError) -> (asset: Asset, added: Bool)
  {
    try storage.add(file: path, move: move, into: folder)
  }

  /// Adds image or video bytes held in memory, as a file called `name` (its last component,
  /// cleaned of what a file name should not hold).
  ///
  /// - Throws: as ``add(file:move:into:)``; `empty` for no bytes.
  public func add(bytes: [UInt8], name: String) throws(DarkroomError)
    -> (asset: Asset, added: Bool)
  {
    try storage.add(bytes: bytes, name: name, into: nil, limits: .none)
  }

  /// Adds an upload as it arrives: `body`'s pieces (`length` bytes in all when it is known)
  /// are written or sealed as they come, never whole in memory where the length is known,
  /// checked against `limits`, and catalogued; or nothing is left. `folder` is where in a
  /// folder's library (``Upload/defaultFolder`` for nil); a space has none.
  ///
  /// - Throws: `tooLarge` past `limits` or past `length`; `invalidArgument` for a body that
  ///   ends before `length` bytes or fails, a folder outside the library, or any folder in a
  ///   space; `empty`; `unsupportedFormat`. (`name`'s last component is kept, cleaned of what
  ///   a file name should not hold.)
  package func add<Body: AsyncSequence & Sendable>(
    streaming body: Body, length: Int?, name: String, into folder: String? = nil,
    limits: Upload.Limits
  ) async throws(DarkroomError) -> (asset: Asset, added: Bool) where Body.Element == [UInt8] {
    if let length, Int64(length) > limits.maxBytes { throw Upload.tooLarge(name, limits) }
    return try await storage.add(
      streaming: body, length: length, name: name, into: folder, limits: limits)
  }
}

extension FolderStorage {
  func add(file path: String, move: Bool, into folder: String?) throws(DarkroomError)
    -> (asset: Asset, added: Bool)
  {
    // Resolved through every link: a library's own file reached by another way must not be
    // copied into it, nor (moved) removed from it.
    guard let real = Self.resolved(path) else { throw InputFile.errnoError(path) }
    guard let root = Self.resolved(library.rootPath) else {
      throw InputFile.errnoError(library.rootPath)
    }
    if real.hasPrefix(root.hasSuffix("/") ? root : root + "/") {
      throw DarkroomError(
        .invalidArgument, file: path, "is in the library already: scan it to catalogue it")
    }
    let file = try InputFile(path)
    let before = file.identity
    let added: (asset: Asset, added: Bool)
    do throws(DarkroomError) {
      let upload = try Upload(
        into: library, name: URL(fileURLWithPath: path).lastPathComponent,
        folder: folder, limits: .none)
      var offset = 0
      while offset < file.size {
        let piece = try file.read(at: offset, count: min(1 << 20, file.size - offset))
        guard !piece.isEmpty else {
          throw DarkroomError(.truncated, file: path, "the file shrank while it was read")
        }
        try upload.append(piece)
        offset += piece.count
      }
      added = try Self.result(upload.finish())
    } catch {
      // Named as the caller named it (an upload's errors name its file's last component).
      var error = error
      if error.file == Upload.safeName(URL(fileURLWithPath: path).lastPathComponent) {
        error.file = path
      }
      throw error
    }
    if move {
      if !added.added { try keepsItsCopy(added.asset, movedFrom: path, before) }
      try file.removeMoved(
        unchangedSince: before,
        changed: "changed while it was copied; it is in the library, and kept here")
    }
    return added
  }

  /// Throws, so that a moved file whose bytes the library had already is kept, unless the
  /// asset that has them keeps them: out of the trash (which may be emptied), its file there
  /// as catalogued, and not the very file being moved (the library's own, reached by a way
  /// `realpath` does not see, such as a second mount).
  private func keepsItsCopy(_ existing: Asset, movedFrom path: String, _ source: FileIdentity?)
    throws(DarkroomError)
  {
    let kept = DarkroomError(
      .conflict, file: path,
      "the library has these bytes as \(existing.name) (\(existing.id)), which is in the trash "
        + "or not as catalogued: restore or scan it; kept here")
    guard existing.trashedAt == nil,
      let own = try? library.openFile(of: existing, exactly: true), let ownID = own.identity
    else { throw kept }
    if let source, source.device == ownID.device, source.inode == ownID.inode {
      throw DarkroomError(
        .invalidArgument, file: path, "is in the library already: scan it to catalogue it")
    }
  }

  func add(bytes: [UInt8], name: String, into folder: String?, limits: Upload.Limits)
    throws(DarkroomError) -> (asset: Asset, added: Bool)
  {
    let upload = try Upload(
      into: library, name: name, folder: folder, limits: limits)
    try upload.append(bytes)
    return try Self.result(upload.finish())
  }

  func add<Body: AsyncSequence & Sendable>(
    streaming body: Body, length: Int?, name: String, into folder: String?,
    limits: Upload.Limits
  ) async throws(DarkroomError) -> (asset: Asset, added: Bool) where Body.Element == [UInt8] {
    let upload = try Upload(
      into: library, name: name, folder: folder, limits: limits)
    do {
      for try await piece in body {
        try upload.append(piece)
      }
    } catch let error as DarkroomError {
      throw error
    } catch {
      // The sender went before its body did (the partial file went with `upload`).
      throw Upload.cutOff(name)
    }
    if let length, upload.byteCount > Int64(length) { throw Upload.overLength(name, length) }
    if let length, upload.byteCount < Int64(length) { throw Upload.cutOff(name) }
    return try Self.result(upload.finish())
  }

  /// `path` with every link and `..` resolved (`realpath`); nil when it cannot be.
  private static func resolved(_ path: String) -> String? {
    guard let real = realpath(path, nil) else { return nil }
    defer { free(real) }
    return String(cString: real)
  }

  private static func result(_ outcome: Upload.Outcome) -> (asset: Asset, added: Bool) {
    switch outcome {
    case .added(let asset): (asset, true)
    case .duplicate(let asset): (asset, false)
    }
  }
}

extension SealedStorage {
  func add(file path: String, move: Bool, into folder: String?) throws(DarkroomError)
    -> (asset: Asset, added: Bool)
  {
    if folder != nil { try library.require(.subfolders) }
    let (asset, added) = try space.add(file: path, move: move)
    return (asset.asset, added)
  }

  /// (The pixels are checked against `limits` from the header the space's own workers read
  /// once.)
  func add(bytes: [UInt8], name: String, into folder: String?, limits: Upload.Limits)
    throws(DarkroomError) -> (asset: Asset, added: Bool)
  {
    if folder != nil { try library.require(.subfolders) }
    guard Int64(bytes.count) <= limits.maxBytes else { throw Upload.tooLarge(name, limits) }
    let name = Upload.safeName(name)  // (a folder's, by `Upload`)
    let (asset, added) = try space.add(bytes: bytes, name: name) {
      media throws(DarkroomError) in
      try limits.check(width: media.width, height: media.height, name: name)
    }
    return (asset.asset, added)
  }

  /// (Sealed chunk by chunk as the pieces arrive: at most a few MiB wait between the body
  /// and the sealing. A body of unknown length is held in memory, up to the limit, first.)
  func add<Body: AsyncSequence & Sendable>(
    streaming body: Body, length: Int?, name: String, into folder: String?,
    limits: Upload.Limits
  ) async throws(DarkroomError) -> (asset: Asset, added: Bool) where Body.Element == [UInt8] {
    if folder != nil { try library.require(.subfolders) }
    guard let length else {
      var bytes: [UInt8] = []
      do {
        for try await piece in body {
          guard Int64(bytes.count + piece.count) <= limits.maxBytes else {
            throw Upload.tooLarge(name, limits)
          }
          bytes += piece
        }
      } catch let error as DarkroomError {
        throw error
      } catch {
        throw Upload.cutOff(name)
      }
      let held = bytes
      return try await offThread { () throws(DarkroomError) in
        try add(bytes: held, name: name, into: nil, limits: limits)
      }
    }
    let name = Upload.safeName(name)
    guard length > 0 else { throw DarkroomError(.empty, file: name, "empty upload (0 bytes)") }
    let (space, pipe) = (space, BytePipe())
    async let sealed = offThread { () throws(DarkroomError) -> (SpaceAsset, Bool) in
      defer { pipe.cancel() }
      return try space.add(streaming: pipe.read, length: length, name: name) {
        media throws(DarkroomError) in
        try limits.check(width: media.width, height: media.height, name: name)
      }
    }
    var received = 0
    do {
      for try await piece in body {
        received += piece.count
        guard received <= length else {
          pipe.fail(Upload.overLength(name, length))
          break
        }
        guard await pipe.write(piece) else { break }
      }
      // A body that ends short is the sender's, as a folder's upload says (not the file's).
      if received < length { pipe.fail(Upload.cutOff(name)) } else { pipe.finish() }
    } catch {
      pipe.fail(Upload.cutOff(name))
    }
    do {
      let (asset, added) = try await sealed
      return (asset.asset, added)
    } catch let error as DarkroomError {
      throw error
    } catch {
      throw DarkroomError(.engine, file: name, "\(error)")
    }
  }
}
