import FoundationEssentials

/// A space's catalog as the ``Catalog`` protocol speaks it, so that a ``Library`` over the
/// space fetches, counts, pages and looks up its assets the way it does a folder's: the
/// sealed rows a space holds in memory while it is unlocked, matched and sorted here.
///
/// A space keeps less than a folder's catalog (docs/spaces.md): no folders, albums,
/// favourites, fingerprints, job records or change log, and of each photo only its name,
/// size, format and dates. Queries on what it does not keep match nothing (a camera, a
/// place, a video's length), as they do for a folder's assets without it; calls that would
/// write it throw a ``CatalogError`` saying a space keeps no such thing. Its writes are the
/// space's own (``Space/add(file:move:)``, edits, the trash), made through the library.
struct SealedCatalog: Catalog {
  let space: Space

  private func refused(_ what: String) -> CatalogError {
    CatalogError("a space keeps no \(what)")
  }

  /// Every asset of the space, as ``Asset``s.
  ///
  /// - Throws: "the space is locked" once it is.
  private func all() throws -> [Asset] {
    guard !space.isClosed else { throw CatalogError("the space is locked") }
    return space.assets.map(\.asset)
  }

  // MARK: Fetching

  func asset(_ id: AssetID) throws -> Asset? {
    guard !space.isClosed else { throw CatalogError("the space is locked") }
    return space.asset(id: SpaceAsset.spaceID(id))?.asset
  }

  /// The asset whose name this is, when one asset has it.
  func asset(atPath path: String) throws -> Asset? {
    let named = try all().filter { $0.path == path }
    return named.count == 1 ? named[0] : nil
  }

  func assets(withHash hash: String) throws -> [Asset] {
    try all().filter { $0.contentHash == hash }
  }

  func cataloguedContents(_ hashes: [String]) throws -> Set<String> {
    Set(try all().map(\.contentHash)).intersection(hashes)
  }

  func count(_ query: AssetQuery) throws -> Int { try matching(query).count }

  func assets(_ query: AssetQuery, offset: Int, limit: Int) throws -> [Asset] {
    Array(try matching(query).dropFirst(max(0, offset)).prefix(max(0, limit)))
  }

  func ids(_ query: AssetQuery) throws -> [AssetID] { try matching(query).map(\.id) }

  func months(_ query: AssetQuery) throws -> [MonthCount] {
    var whole = query
    whole.after = nil
    let counts = Dictionary(grouping: try matching(whole), by: \.month).mapValues(\.count)
    return counts.map { MonthCount(month: $0.key, count: $0.value) }
      .sorted { query.sort == .date ? $0.month < $1.month : $0.month > $1.month }
  }

  func assets(withIDs ids: [AssetID]) throws -> [Asset] {
    guard !space.isClosed else { throw CatalogError("the space is locked") }
    return ids.compactMap { space.asset(id: SpaceAsset.spaceID($0))?.asset }
  }

  func assets(under folder: String) throws -> [Asset] {
    guard folder.isEmpty else { return [] }
    return try all()
  }

  /// The assets `query` matches, in its order; the same filters and order as
  /// ``SQLiteCatalog``'s, on the fields a space keeps.
  func matching(_ query: AssetQuery) throws -> [Asset] {
    switch query.album {
    case nil, .smart(.all), .smart(.trash), .smart(.edited), .smart(.recentlyAdded),
      .smart(.videos):
      break
    // A space holds photos and videos whole (an upload that does not read is refused),
    // none favoured, none placed.
    case .smart(.favourites), .smart(.withLocation), .smart(.problems):
      return []
    case .folder, .user: throw refused("folders or albums")
    }
    let trashed = query.trashed || query.album == .smart(.trash)
    let recent = Double(AssetID.nowMilliseconds()) / 1000 - SmartAlbum.recentDays * 86400
    var found = try all().filter { asset in
      (asset.trashedAt != nil) == trashed
        && query.mediaType.map { asset.mediaType == $0 } ?? true
        && (query.album != .smart(.videos) || asset.mediaType == .video)
        && query.from.map { asset.sortDate >= $0 } ?? true
        && query.to.map { asset.sortDate <= $0 } ?? true
        && query.month.map { asset.month == $0 } ?? true
        && query.day.map { asset.day == $0 } ?? true
        && query.edited.map { (asset.adjustmentVersion > 0) == $0 } ?? true
        && query.favourite != true && query.damaged != true
        && query.only.map { asset.id == $0 } ?? true
        && query.camera == nil && query.near == nil && query.rating == nil
        && query.keyword == nil && query.place == nil
        && query.text.map { asset.name.localizedCaseInsensitiveContains($0) } ?? true
        && query.minDuration.map { least in asset.duration.map { $0 >= least } ?? false } ?? true
        && query.maxDuration.map { most in asset.duration.map { $0 <= most } ?? false } ?? true
        && (query.album != .smart(.edited) || asset.adjustmentVersion > 0)
        && (query.album != .smart(.recentlyAdded) || asset.addedAt >= recent)
    }
    let descending = query.sort == .dateDescending
    let before: (Asset, Asset) -> Bool = { a, b in
      switch query.sort {
      case .date, .album, .dateDescending:
        (a.sortDate, a.id) < (b.sortDate, b.id)
      case .name:
        a.name.utf8.elementsEqual(b.name.utf8)
          ? a.id < b.id : a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
      case .size: (a.byteSize, a.id) < (b.byteSize, b.id)
      }
    }
    found.sort { descending ? before($1, $0) : before($0, $1) }
    if let after = query.after {
      // Keyset paging: what follows the cursor's asset in this order (nothing, if it is gone).
      guard let cursor = try asset(after) else { return [] }
      found.removeAll { descending ? !before($0, cursor) : !before(cursor, $0) }
    }
    return found
  }

  func exactDuplicates() throws -> [[AssetID]] {
    Dictionary(grouping: try all().filter { $0.trashedAt == nil }, by: \.contentHash).values
      .filter { $0.count > 1 }.map { $0.map(\.id).sorted() }
  }

  // MARK: What a space does not keep

  func entries(inFolder folder: String) throws -> [CatalogEntry] { [] }
  func entries(inFolder folder: String, named names: [String]) throws -> [CatalogEntry] { [] }
  func folders(under folder: String) throws -> [String] { [] }
  func commit(_ changes: CatalogChanges) throws { throw refused("scanned files") }
  func albums() throws -> [Album] { [] }
  func createAlbum(_ title: String) throws { throw refused("albums") }
  func renameAlbum(_ title: String, to newTitle: String) throws { throw refused("albums") }
  func deleteAlbum(_ title: String) throws { throw refused("albums") }
  func addToAlbum(_ title: String, _ ids: [AssetID]) throws { throw refused("albums") }
  func removeFromAlbum(_ title: String, _ ids: [AssetID]) throws { throw refused("albums") }
  func setPoster(_ title: String, _ id: AssetID?) throws { throw refused("albums") }
  func setFavourite(_ ids: [AssetID], _ value: Bool) throws { throw refused("favourites") }
  /// (A space's renders go another way: nothing is marked.)
  func markDamaged(_ damage: AssetDamage, ifStill asset: Asset) throws -> Bool { false }
  func maintain() throws {}
  func deferIndexes() throws -> Bool { false }
  func restoreIndexes() throws {}
  func check() throws -> [String] { [] }
  func changes(since sequence: Int64, limit: Int) throws -> [CatalogChange] {
    throw refused("change log")
  }
  func lastChange() throws -> Int64 { throw refused("change log") }
  func move(_ id: AssetID, to path: String, trashedAt: Double?) throws {
    throw refused("folders")
  }
  func fingerprints() throws -> [Fingerprint] { [] }
  /// (A space keeps no places: its photos' positions stay sealed.)
  func places(in country: String?) throws -> [PlaceCount] { [] }
  func positions(south: Double, west: Double, north: Double, east: Double) throws
    -> [(id: AssetID, latitude: Double, longitude: Double, showable: Bool)]
  { [] }
  func save(_ fingerprints: [Fingerprint]) throws { throw refused("fingerprints") }
  func distinctPairs() throws -> [(AssetID, AssetID)] { [] }
  func markDistinct(_ ids: [AssetID]) throws { throw refused("duplicate choices") }
  func saveJob(_ job: StoredJob) throws { throw refused("job records") }
  func recordJobItem(_ job: String, _ id: AssetID, error: String?) throws {
    throw refused("job records")
  }
  func job(_ id: String) throws -> StoredJob? { nil }
  func claimJob(_ id: String, state: String, owner: String, by newOwner: String) throws -> Bool {
    false
  }
  func forgetJobs(endedBefore time: Double, keeping: Int) throws {}
}

extension SpaceAsset {
  /// The asset as a library shows it: its id as an ``AssetID`` (the same 128 random bits),
  /// its name as its path, its keyed identity as its content hash, and its added date as
  /// its sort date (a space keeps no capture date).
  var asset: Asset {
    var asset = Asset(
      id: Self.assetID(id) ?? AssetID(bits: 0), path: name, contentHash: identity,
      identity: FileIdentity(device: 0, inode: 0, size: Int64(byteSize), modified: 0, changed: 0),
      mediaType: isVideo ? .video : .photo, format: format, width: width, height: height,
      sortDate: added, addedAt: added)
    asset.captureDate = nil
    asset.duration = duration
    asset.adjustmentVersion = editVersion
    asset.trashedAt = trashed ? (trashedAt ?? added) : nil
    asset.motionVideo = motionVideo
    // What a library's row says of an edited file, which is its edit's result: that size.
    if let editedWidth, let editedHeight {
      (asset.width, asset.height) = (editedWidth, editedHeight)
      (asset.displayWidth, asset.displayHeight) = (editedWidth, editedHeight)
    }
    return asset
  }

  /// A space's id (32 hex digits) as an asset id; nil for text that is not one.
  static func assetID(_ hexID: String) -> AssetID? {
    let digits = Array(hexID.utf8)
    guard digits.count == 32 else { return nil }
    var bits: UInt128 = 0
    for digit in digits {
      guard let value = hexValue(digit) else { return nil }
      bits = bits << 4 | UInt128(value)
    }
    // 26 base-32 digits hold 130 bits; the top two are zero in every AssetID, and a space's
    // ids are 128 bits: each one has exactly one AssetID.
    return AssetID(bits: bits)
  }

  /// An asset id as a space's id (32 hex digits).
  static func spaceID(_ id: AssetID) -> String {
    let bits = id.bits
    let bytes = (0..<16).map { UInt8(truncatingIfNeeded: bits >> (8 * UInt128(15 - $0))) }
    return hex(bytes[...])
  }

}
