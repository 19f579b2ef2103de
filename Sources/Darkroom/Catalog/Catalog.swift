import Synchronization

/// What a library's catalog keeps, behind a narrow interface of plain values: the scan, the
/// fetches and the albums speak only this, so a server deployment could keep it in another
/// database. ``SQLiteCatalog`` (SQLite through GRDB, in `.darkroom/catalog.sqlite`) is the
/// embedded one and the default; ``PostgresCatalog`` keeps the same in PostgreSQL, for
/// several servers (``Library/catalogURL``).
///
/// Every method may be called from any thread, and by several processes sharing one
/// library: writes wait for each other rather than fail.
package protocol Catalog: Sendable {
  /// What the catalog holds of one folder's files (photos, videos, and files it skipped).
  func entries(inFolder folder: String) throws -> [CatalogEntry]
  /// What it holds of the files with these names in one folder.
  func entries(inFolder folder: String, named names: [String]) throws -> [CatalogEntry]
  /// The folders it knows at or under `folder` (`""`: all).
  func folders(under folder: String) throws -> [String]
  /// The assets at or under `folder`.
  func assets(under folder: String) throws -> [Asset]
  /// Writes one batch of a scan's findings, all or nothing.
  func commit(_ changes: CatalogChanges) throws

  func asset(_ id: AssetID) throws -> Asset?
  func asset(atPath path: String) throws -> Asset?
  /// Assets whose content has this SHA-256 (hex).
  func assets(withHash hash: String) throws -> [Asset]
  /// Which of these contents (SHA-256, hex) some asset has.
  func cataloguedContents(_ hashes: [String]) throws -> Set<String>
  /// How many assets a query matches, and one page of them in its order.
  func count(_ query: AssetQuery) throws -> Int
  func assets(_ query: AssetQuery, offset: Int, limit: Int) throws -> [Asset]
  /// The ids a query matches, in its order.
  func ids(_ query: AssetQuery) throws -> [AssetID]
  /// How many assets a query matches in each month (``Asset/month``), newest month first
  /// (oldest first when it sorts by `date`), months without any left out; `after` ignored.
  func months(_ query: AssetQuery) throws -> [MonthCount]
  /// The assets with these ids, in any order; ids it does not know are left out.
  func assets(withIDs ids: [AssetID]) throws -> [Asset]

  /// Every album with its count and poster: smart albums, folders, user albums.
  func albums() throws -> [Album]
  func createAlbum(_ title: String) throws
  func renameAlbum(_ title: String, to newTitle: String) throws
  func deleteAlbum(_ title: String) throws
  /// Appends assets to a user album (those already in it keep their place).
  func addToAlbum(_ title: String, _ ids: [AssetID]) throws
  func removeFromAlbum(_ title: String, _ ids: [AssetID]) throws
  /// Chooses an album's poster; nil goes back to the newest.
  func setPoster(_ title: String, _ id: AssetID?) throws
  func setFavourite(_ ids: [AssetID], _ value: Bool) throws
  /// Marks an asset damaged (a render found its data bad) in one conditional write: only
  /// while no damage is recorded and its row still describes the file as `asset` does
  /// (content hash, device, inode, size, modification time), so that a move, a trash or a
  /// rescan meanwhile is never undone. True when it was marked (a change is logged).
  func markDamaged(_ damage: AssetDamage, ifStill asset: Asset) throws -> Bool

  /// Keeps the database's statistics fresh for its query planner (after a scan).
  func maintain() throws

  /// Before a scan: when the catalog holds no asset yet (a first scan), drops the indexes
  /// that are cheaper built after the rows than kept row by row, remembering them; true when
  /// it did. ``restoreIndexes()`` builds them again: after the scan, and when the catalog is
  /// opened (after a scan that was killed).
  func deferIndexes() throws -> Bool
  /// Builds the indexes ``deferIndexes()`` dropped, if any.
  func restoreIndexes() throws

  /// Problems the database finds in itself (empty when sound).
  func check() throws -> [String]

  /// The change log after `sequence`, oldest first, at most `limit` entries.
  func changes(since sequence: Int64, limit: Int) throws -> [CatalogChange]
  /// The last change's sequence number (0: none yet).
  func lastChange() throws -> Int64

  /// Moves an asset's row to `path` (relative to the root): into the trash with the time it
  /// went there (its old path kept), or out of it (`trashedAt` nil).
  func move(_ id: AssetID, to path: String, trashedAt: Double?) throws

  /// Groups of assets (outside the trash) with the same content, each sorted by id.
  func exactDuplicates() throws -> [[AssetID]]
  /// Countries (or, with `country`, its towns) with their counts and posters, most first.
  func places(in country: String?) throws -> [PlaceCount]
  /// Every visible asset with a position inside the box (degrees, `west` > `east` across the
  /// antimeridian): id, latitude, longitude, whether it shows something, newest first.
  func positions(south: Double, west: Double, north: Double, east: Double) throws
    -> [(id: AssetID, latitude: Double, longitude: Double, showable: Bool)]
  /// Every photo's fingerprint for its current content, nil where none is stored yet (only
  /// those carry their content hash; the others' is empty, as the catalog already matched
  /// it).
  func fingerprints() throws -> [Fingerprint]
  func save(_ fingerprints: [Fingerprint]) throws
  /// Pairs the user said are not duplicates.
  func distinctPairs() throws -> [(AssetID, AssetID)]
  /// Remembers that these assets are not duplicates of each other.
  func markDistinct(_ ids: [AssetID]) throws

  /// Writes a job's header (its first time), or its state, owner and end (after).
  func saveJob(_ job: StoredJob) throws
  /// How a job's item ended: `error` nil for done. A later outcome of the same item (a
  /// resumed job) replaces it.
  func recordJobItem(_ job: String, _ id: AssetID, error: String?) throws
  /// A job with its items' outcomes; nil for an id the catalog does not know.
  func job(_ id: String) throws -> StoredJob?
  /// Marks a job running under `newOwner` if it is still in `state` under `owner`; false if
  /// another process took it first.
  func claimJob(_ id: String, state: String, owner: String, by newOwner: String) throws -> Bool
  /// Forgets the jobs that ended before `time`, but the `keeping` that ended last (their
  /// items go with them).
  func forgetJobs(endedBefore time: Double, keeping: Int) throws
}

/// One file as the catalog last saw it.
package struct CatalogEntry: Sendable, Equatable {
  package var name: String
  package var identity: FileIdentity
  /// The asset it is; nil for a file the scan skipped (no photo or video it reads).
  package var asset: AssetID?
  package var contentHash: String?
  package var isOffline: Bool
}

/// A file the scan read and could not take, remembered so that a rescan does not read it
/// again until it changes.
package struct SkippedFile: Sendable, Equatable {
  package var path: String
  package var identity: FileIdentity
  package var reason: String

  /// The version of what the scan reads: files skipped by an older one (before it knew a
  /// format, or when a damaged file was skipped rather than catalogued) are read again.
  package static let reader = 2
}

/// One batch of a scan's findings.
package struct CatalogChanges: Sendable {
  /// New assets, and assets whose row is replaced whole (same id: changed, moved).
  package var upserts: [Asset] = []
  package var removals: [AssetID] = []
  /// Where a removal's asset was when it was found gone: if its row is elsewhere by the
  /// commit (another writer moved it: to the trash, say), it is not removed.
  package var removedFrom: [AssetID: String] = [:]
  /// Assets whose files are out of reach (true) or back (false).
  package var offline: [(AssetID, Bool)] = []
  package var skipped: [SkippedFile] = []
  /// Paths no longer skipped (gone, or now an asset).
  package var unskipped: [String] = []

  package init() {}

  package var isEmpty: Bool {
    upserts.isEmpty && removals.isEmpty && offline.isEmpty && skipped.isEmpty
      && unskipped.isEmpty
  }
}

/// Errors of a catalog's own making (the database's own are passed on as they are).
package struct CatalogError: Error, Sendable, Equatable, CustomStringConvertible {
  package var message: String
  /// The error names something the catalog does not have (an album, an asset).
  package var isMissing = false
  package init(_ message: String, missing: Bool = false) {
    self.message = message
    isMissing = missing
  }
  package var description: String { message }
}

/// Wakes those waiting for the catalog to change: rung after each commit (in this process;
/// another process's are seen by polling).
final class CommitBell: Sendable {
  private let state = Locked<(ring: UInt64, waiting: [UInt64: CheckedContinuation<Void, Never>])>(
    (0, [:]))
  private let keys = Atomic<UInt64>(0)

  /// How many times it rang.
  var count: UInt64 { state.withLock { $0.ring } }

  func ring() {
    let waiting = state.withLock { state in
      state.ring += 1
      defer { state.waiting = [:] }
      return Array(state.waiting.values)
    }
    for continuation in waiting { continuation.resume() }
  }

  /// Returns once it rings after `seen` (at once if it has), or after `timeout`.
  func wait(after seen: UInt64, atMost timeout: Duration) async {
    let key = keys.add(1, ordering: .relaxed).newValue
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let now = state.withLock { state -> Bool in
        if state.ring != seen { return true }
        state.waiting[key] = continuation
        return false
      }
      if now { return continuation.resume() }
      Task {
        try? await Task.sleep(for: timeout)
        state.withLock { $0.waiting.removeValue(forKey: key) }?.resume()
      }
    }
  }
}
