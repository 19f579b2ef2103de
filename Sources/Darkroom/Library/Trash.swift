import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// What ``Library/emptyTrash(olderThan:)`` removed.
package struct EmptiedTrash: Sendable, Codable, Equatable {
  /// Assets deleted for good, with their files.
  package var assets: [AssetID] = []
  /// Originals and adjustment documents nothing refers to any more.
  package var storeEntries = 0
}

extension Library {
  /// `.darkroom/trash`: each trashed asset's file in a folder named by its id.
  package var trashFolder: URL { metadataFolder.appendingPathComponent("trash") }

  /// Moves assets to the trash: each file (with its edit history, which the store keeps by
  /// content) into `.darkroom/trash/ID/`, out of every fetch but `smart:trash`. The catalog
  /// is changed first, and back again if the file cannot be moved.
  ///
  /// - Throws: `notFound` for an unknown id; `invalidArgument` for one already in the trash;
  ///   `io` when a file cannot be moved (that asset is left as it was).
  @discardableResult
  public func trash(_ ids: [AssetID]) throws(DarkroomError) -> [Asset] {
    try storage.move(ids, trashing: true)
  }

  /// ``trash(_:)`` for a folder's files.
  func trashFiles(_ ids: [AssetID]) throws(DarkroomError) -> [Asset] {
    var moved: [Asset] = []
    // Each folder touched is made durable once, before this returns (or throws).
    var touched = Set<String>()
    defer { Self.sync(touched) }
    for id in ids {
      // The row and the file move together, as a scan's removals see them; the asset is
      // read under the lock, so that two trashes of one asset cannot both go ahead.
      try withMoveLock { () throws(DarkroomError) in
        let asset = try asset(id)
        guard asset.trashedAt == nil else {
          throw DarkroomError(.invalidArgument, file: id.rawValue, "is in the trash already")
        }
        let target = ".darkroom/trash/\(id.rawValue)/\(asset.name)"
        let now = Double(AssetID.nowMilliseconds()) / 1000
        try catalogCall { try $0.move(id, to: target, trashedAt: now) }
        do throws(DarkroomError) {
          try Folders.create(trashFolder.appendingPathComponent(id.rawValue).path)
          try Self.rename(path(of: asset), to: root.path + "/" + target, touching: &touched)
          Self.moveSidecar(of: path(of: asset), to: root.path + "/" + target, touching: &touched)
          Self.moveLiveVideo(
            asset, from: path(of: asset), to: root.path + "/" + target, touching: &touched)
        } catch {
          try? catalogCall { try $0.move(id, to: asset.path, trashedAt: nil) }
          throw error
        }
      }
      moved.append(try self.asset(id))
    }
    return moved
  }

  /// Puts trashed assets back where they were, with their ids, albums and favourites.
  ///
  /// - Throws: `invalidArgument` for an asset not in the trash, or whose old place is taken
  ///   by another file now (move that one away first); `io` when a file cannot be moved.
  @discardableResult
  public func restore(_ ids: [AssetID]) throws(DarkroomError) -> [Asset] {
    try storage.move(ids, trashing: false)
  }

  /// ``restore(_:)`` for a folder's files.
  func restoreFiles(_ ids: [AssetID]) throws(DarkroomError) -> [Asset] {
    var restored: [Asset] = []
    var touched = Set<String>()
    defer { Self.sync(touched) }
    for id in ids {
      try withMoveLock { () throws(DarkroomError) in
        let asset = try asset(id)
        guard asset.trashedAt != nil, let place = asset.trashedFrom else {
          throw DarkroomError(.invalidArgument, file: id.rawValue, "is not in the trash")
        }
        let destination = root.path + "/" + place
        guard !FileManager.default.fileExists(atPath: destination) else {
          throw DarkroomError(
            .invalidArgument, file: destination,
            "cannot restore \(id) there: another file has taken its place")
        }
        // Its sidecar goes back with it: a sidecar there now (another's) would be taken for
        // its own, and its own would be left in the trash.
        if FileManager.default.fileExists(atPath: path(of: asset) + ".xmp"),
          FileManager.default.fileExists(atPath: destination + ".xmp")
        {
          throw DarkroomError(
            .invalidArgument, file: destination + ".xmp",
            "cannot restore \(id) there: another sidecar has taken its sidecar's place")
        }
        try Folders.create(FilePath(destination).parent)
        try Self.rename(path(of: asset), to: destination, touching: &touched)
        Self.moveSidecar(of: path(of: asset), to: destination, touching: &touched)
        Self.moveLiveVideo(asset, from: path(of: asset), to: destination, touching: &touched)
        try catalogCall { try $0.move(id, to: place, trashedAt: nil) }
        // Its trash folder goes (it is empty now).
        rmdir(trashFolder.appendingPathComponent(id.rawValue).path)
      }
      restored.append(try self.asset(id))
    }
    return restored
  }

  /// Deletes trashed assets for good (those trashed at least `olderThan` seconds ago, or
  /// all): their files, their rows, and the store entries (originals, adjustment data) that
  /// no other asset of the library refers to. Nothing else is touched.
  ///
  /// - Throws: `io` when the catalog cannot be written.
  package func emptyTrash(olderThan age: Double? = nil) throws(DarkroomError) -> EmptiedTrash {
    try require(.trashFolder)
    let cutoff = Double(AssetID.nowMilliseconds()) / 1000 - (age ?? 0)
    let due = try trashedAssets().filter { ($0.trashedAt ?? 0) <= cutoff }
    var emptied = EmptiedTrash()
    guard !due.isEmpty else { return emptied }
    var changes = CatalogChanges()
    changes.removals = due.map(\.id)
    try catalogCall { try $0.commit(changes) }
    for asset in due {
      unlink(path(of: asset))
      try? FileManager.default.removeItem(
        atPath: trashFolder.appendingPathComponent(asset.id.rawValue).path)
    }
    emptied.assets = due.map(\.id)
    // What the rest of the library still refers to: every asset's content, in the trash too.
    var everything = AssetQuery()
    everything.includeHidden = true
    // One read each: a row removed meanwhile must not fail the emptying half way.
    let kept = Set(
      try catalogCall { try $0.assets(everything, offset: 0, limit: Int.max) }.map(\.contentHash))
    let keptInTrash = try trashedAssets().map(\.contentHash)
    emptied.storeEntries = store.removeEntries(
      of: Set(due.map(\.contentHash)), keeping: kept.union(keptInTrash))
    return emptied
  }

  /// The trashed assets `items` name, by id or by their paths before the trash.
  ///
  /// - Throws: `notFound` naming an item that is not in the trash.
  package func trashedIDs(_ items: [String]) throws(DarkroomError) -> [AssetID] {
    try storage.trashedIDs(items)
  }

  /// ``trashedIDs(_:)`` among a folder's files: by id, or by the path before the trash.
  func trashedFileIDs(_ items: [String]) throws(DarkroomError) -> [AssetID] {
    let trashed = try trashedAssets()
    var ids: [AssetID] = []
    for item in items {
      let place = relativePath(item)
      guard let found = trashed.first(where: { $0.id.rawValue == item || $0.trashedFrom == place })
      else {
        throw DarkroomError(.notFound, file: item, "is not in the trash")
      }
      ids.append(found.id)
    }
    return ids
  }

  /// What is in the trash, in the order it went there (hidden assets too).
  public func trashedAssets() throws(DarkroomError) -> [Asset] {
    var query = AssetQuery()
    query.trashed = true
    query.includeHidden = true
    return try catalogCall { try $0.assets(query, offset: 0, limit: Int.max) }.sorted {
      ($0.trashedAt ?? 0) < ($1.trashedAt ?? 0)
    }
  }

  /// `rename(2)`; both folders are noted, for ``sync(_:)`` to make durable.
  private static func rename(_ from: String, to: String, touching folders: inout Set<String>)
    throws(DarkroomError)
  {
    guard Glibc.rename(from, to) == 0 else {
      let reason = String(cString: strerror(errno))
      throw DarkroomError(.io, file: from, "cannot move it to \(to): \(reason)")
    }
    folders.insert(FilePath(from).parent)
    folders.insert(FilePath(to).parent)
  }

  /// Moves the photo's own sidecar (`NAME.EXT.xmp`, as `darkroom meta` and darktable write
  /// it) with it, into the trash and back, when there is one and nothing is in its way; a
  /// `NAME.xmp` stays, since other files of that name (a RAW beside its JPEG) may share it.
  /// The photo has moved already: a sidecar that cannot follow stays where it was.
  private static func moveSidecar(of from: String, to: String, touching folders: inout Set<String>)
  {
    var info = stat()
    guard lstat(from + ".xmp", &info) == 0, info.st_mode & S_IFMT == S_IFREG,
      lstat(to + ".xmp", &info) != 0
    else { return }
    try? rename(from + ".xmp", to: to + ".xmp", touching: &folders)
  }

  /// Moves a Live Photo's MOV with its still (which has moved from `from` to `to` already),
  /// into the trash and back: left behind, it would be catalogued as a video of its own. A
  /// MOV that cannot follow (another file in its way) stays where it was.
  private static func moveLiveVideo(
    _ asset: Asset, from: String, to: String, touching folders: inout Set<String>
  ) {
    guard let name = asset.liveVideo else { return }
    let (source, target) = (FilePath(from).parent + "/" + name, FilePath(to).parent + "/" + name)
    var info = stat()
    guard lstat(source, &info) == 0, info.st_mode & S_IFMT == S_IFREG, lstat(target, &info) != 0
    else { return }
    try? rename(source, to: target, touching: &folders)
  }

  /// Makes folders' renames durable, each folder once.
  private static func sync(_ folders: Set<String>) {
    for folder in folders {
      let fd = Glibc.open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
      if fd >= 0 {
        fsync(fd)
        Glibc.close(fd)
      }
    }
  }
}

extension Library {
  /// Runs `body` holding the library's move lock (across processes): trash and restore
  /// hold it while a file and its row move, a scan while it checks and commits removals.
  func withMoveLock<T>(_ body: () throws(DarkroomError) -> T) throws(DarkroomError) -> T {
    try store.withLock(for: "\u{0}moves", body)
  }
}
