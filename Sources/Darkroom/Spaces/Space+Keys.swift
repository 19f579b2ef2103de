import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Changing what opens a space: a new key for everything (rotation), or no key at all.
///
/// A password change alone (``Space/changePassword(to:)``) seals the same space key again:
/// an old copy of the folder's header still opens everything with the old password. A
/// rotation makes a new space key, re-encrypts every object of the space under it (new
/// object names, new object keys, new catalog rows, the same asset ids), seals it under the
/// password, and only then removes all that the old key sealed: an old header copy and the
/// old password then open an empty space.
extension Space {
  /// Re-encrypts the space under a new key sealed under `password` (the current one, or a
  /// new one), and returns it open; this one is closed. Renditions are not carried over:
  /// they are made again when asked for.
  ///
  /// Safe to cut off at any point and run again: before the new key is sealed in the
  /// header, the next writer removes what the rotation wrote so far (the space is as it
  /// was); after, the next writer finishes removing what the old key sealed.
  ///
  /// - Throws: `invalidArgument` for an empty password or one that opens another space;
  ///   what reading and writing objects throws (a damaged object names its asset, and the
  ///   space is left as it was).
  public func rotateKey(password: [UInt8]) throws(DarkroomError) -> Space {
    let rotated = try withWriteLock { () throws(DarkroomError) -> Space in
      var (header, passwordKey) = try sealingKey(for: password)
      let newKey = Sodium.randomKey()
      let next = SpaceKeys(newKey)
      var newBytes = newKey.bytes
      var oldBytes = keys.space.bytes
      defer {
        Sodium.wipe(&newBytes)
        Sodium.wipe(&oldBytes)
      }
      // 1. The new key, in a row of the old: a rotation cut off before its switch is undone.
      let intent = Sodium.random(16)
      try catalog.commit(
        [(intent, SpaceCatalog.Body(rotation: newBytes))], key: keys.catalog)
      // 2. Every asset's objects, copied under the new key; rows under the new key, with the
      //    old key in one of them until the old objects are gone.
      var changes: [(id: [UInt8], body: SpaceCatalog.Body?)] = []
      for asset in assets {
        var copy = asset
        let original = try reader(asset.original, of: asset).readAll()
        let hasher = KeyedHasher(key: next.names)
        hasher.update(original)
        copy.identity = hex(hasher.finish().prefix(16))
        copy.original = try copyObject(original, into: next)
        if let adjustments = asset.adjustments {
          copy.adjustments = try copyObject(
            reader(adjustments, of: asset).readAll(), into: next)
        }
        if let rendered = asset.rendered {
          copy.rendered = try copyObject(reader(rendered, of: asset).readAll(), into: next)
        }
        changes.append((Sodium.random(16), SpaceCatalog.Body(asset: copy)))
      }
      let cleanup = Sodium.random(16)
      changes.append((cleanup, SpaceCatalog.Body(rotatedFrom: oldBytes)))
      try catalog.commit(changes, key: next.catalog)
      FaultInjection.point("rotation-before-switch")
      // 3. The switch: the header's slot holds the new key.
      header.fill(slot, with: newKey, passwordKey: passwordKey)
      try header.write(folder)
      FaultInjection.point("rotation-after-switch")
      // 4. All that the old key sealed goes.
      let space = try Space(folder: folder, slot: slot, kdf: kdf, key: newKey)
      try space.removeEverything(sealedBy: keys)
      try catalog.commit([(cleanup, nil)], key: next.catalog)
      return space
    }
    close()
    return rotated
  }

  /// Removes this space: its slot is filled with random bytes, as an unused slot is, and
  /// every object and catalog row it sealed is removed. Its password then opens nothing, in
  /// this header or in any copy of it taken before. The space is closed.
  public func remove() throws(DarkroomError) {
    try withWriteLock { () throws(DarkroomError) in
      var header = try SpaceHeader.read(folder)
      header.slots[slot] = .unused(header.slots[slot].kdf)
      try header.write(folder)
      try removeEverything(sealedBy: keys)
    }
    close()
  }

  /// A new object under `keys` holding `bytes`; its name.
  private func copyObject(_ bytes: [UInt8], into keys: SpaceKeys) throws(DarkroomError) -> String {
    let name = Self.newName()
    try prepare(name)
    try SpaceObject.write(bytes, name: name, to: objectPath(name), keys: keys)
    return name
  }

  /// Removes every catalog row that opens under `old`, and every object whose header does
  /// (renditions are named by a keyed hash that cannot be listed: each object is tried).
  func removeEverything(sealedBy old: SpaceKeys) throws(DarkroomError) {
    let objects = folder + "/objects"
    for prefix in (try? FileManager.default.contentsOfDirectory(atPath: objects)) ?? [] {
      let names = (try? FileManager.default.contentsOfDirectory(atPath: objects + "/" + prefix))
      for name in names ?? [] where !name.hasSuffix(".partial") {
        let path = objects + "/" + prefix + "/" + name
        if (try? SpaceObjectReader(path: path, name: name, keys: old, label: name)) != nil {
          unlink(path)
        }
      }
    }
    let rows = try catalog.load(key: old.catalog)
    try catalog.commit(rows.map { ($0.id, nil) }, key: old.catalog)
  }

  /// Finishes or undoes a rotation a killed process left (see ``rotateKey(password:)``).
  func recoverRotation(_ row: [UInt8], _ body: SpaceCatalog.Body) throws(DarkroomError) {
    if var newBytes = body.rotation {
      // Cut off before the switch (the header still seals this key): the copies go.
      let abandoned = SpaceKeys(SecretKey(copying: newBytes))
      Sodium.wipe(&newBytes)
      try removeEverything(sealedBy: abandoned)
      abandoned.wipe()
      try catalog.commit([(row, nil)], key: keys.catalog)
    } else if var oldBytes = body.rotatedFrom {
      // Cut off after the switch: what the old key sealed goes.
      let old = SpaceKeys(SecretKey(copying: oldBytes))
      Sodium.wipe(&oldBytes)
      try removeEverything(sealedBy: old)
      old.wipe()
      try catalog.commit([(row, nil)], key: keys.catalog)
    }
  }
}
