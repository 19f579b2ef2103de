import FoundationEssentials

/// How a fetch's result changed, as `PHFetchResultChangeDetails` tells it: the indexes
/// removed (in the result before), inserted and changed (in the result after).
public struct FetchResultChange: Sendable {
  /// The result after the change.
  public var result: AssetFetchResult
  public var removedIndexes: [Int]
  public var insertedIndexes: [Int]
  public var changedIndexes: [Int]
  /// The change log's sequence number this reflects.
  public var sequence: Int64
}

extension Library {
  /// The changes to a fetch's result as they happen, in this process or any other sharing
  /// the library (`PHPhotoLibraryChangeObserver`): a commit to the catalog in this process
  /// wakes it at once, and the change log is also looked at every `interval` for other
  /// processes' commits. When the log moved, the query is run again and compared with the
  /// last result. The first result is read before this returns, so no change after the call
  /// is missed.
  ///
  /// ```swift
  /// var videos = AssetQuery()
  /// videos.mediaType = .video
  /// for try await change in try library.changes(of: videos) {
  ///   print("removed", change.removedIndexes, "inserted", change.insertedIndexes)
  /// }
  /// ```
  public func changes(
    of query: AssetQuery, every interval: Duration = .milliseconds(250)
  ) throws(DarkroomError) -> AsyncThrowingStream<FetchResultChange, Error> {
    let bell = try commitBell()
    let firstRing = bell.count
    let start = try catalogCall { catalog in (try catalog.lastChange(), try catalog.ids(query)) }
    return .produced { continuation in
      var (sequence, ids) = start
      var rung = firstRing
      while !Task.isCancelled {
        await bell.wait(after: rung, atMost: interval)
        rung = bell.count
        try Task.checkCancellation()
        let latest = try catalogCall { try $0.lastChange() }
        guard latest > sequence else { continue }
        var touched = Set<AssetID>()
        var cursor = sequence
        while cursor < latest {
          let changes = try catalogCall { try $0.changes(since: cursor, limit: 1000) }
          guard let last = changes.last else { break }
          touched.formUnion(changes.map(\.id))
          cursor = last.sequence
        }
        sequence = latest
        // The indexes are of the very snapshot the change carries.
        let now = try catalogCall { try $0.ids(query) }
        let result = AssetFetchResult(query: query, ids: now, library: self)
        let (before, after) = (Set(ids), Set(now))
        let change = FetchResultChange(
          result: result,
          removedIndexes: ids.indices.filter { !after.contains(ids[$0]) },
          insertedIndexes: now.indices.filter { !before.contains(now[$0]) },
          changedIndexes: now.indices.filter {
            before.contains(now[$0]) && touched.contains(now[$0])
          },
          sequence: latest)
        ids = now
        if !(change.removedIndexes.isEmpty && change.insertedIndexes.isEmpty
          && change.changedIndexes.isEmpty)
        {
          continuation.yield(change)
        }
      }
    }
  }
}
