import FoundationEssentials

/// One action over many of a library's assets, by id: apply a graph, revert, move to the
/// trash or restore. What a gallery's toolbar does to a selection (the server's batch jobs),
/// with progress for each asset and the catalog brought up to date before it ends.
///
/// ```swift
/// var batch = LibraryBatch(.apply(Presets.named("noir")!), ids: ids)
/// batch.jobs = 2
/// let counts = library.run(batch) { outcome, counts in print(counts.done, "/", counts.total) }
/// ```
public struct LibraryBatch: Sendable {
  /// What is done to each asset.
  public enum Action: Sendable, Equatable {
    /// Renders the graph as the asset's edit (replacing any edit it had).
    case apply(FilterGraph)
    /// Restores the original.
    case revert
    case trash
    case restore

    /// The action's name, as the server's API spells it.
    public var name: String {
      switch self {
      case .apply: "apply"
      case .revert: "revert"
      case .trash: "trash"
      case .restore: "restore"
      }
    }
  }

  /// What happened to one asset.
  public struct Outcome: Sendable, Codable, Equatable {
    public var id: AssetID
    public var status: BatchOutcome.Status
    /// Why it failed.
    public var error: String?
  }

  public var action: Action
  public var ids: [AssetID]
  /// Assets worked on at once (apply only; the others are quick file moves).
  public var jobs = 1
  /// The editor (and so the renderer, and its worker processes) that applies and reverts.
  public var editor = Editor()

  public init(_ action: Action, ids: [AssetID]) {
    self.action = action
    self.ids = ids
  }
}

extension Library {
  /// Runs a batch, calling `progress` after each asset (from the batch's threads, one call
  /// at a time), and returns the counts. An asset that fails is counted and reported; the
  /// others go on. `shouldStop` is asked between trash, restore and revert steps (the ones
  /// left are `notStarted`); an apply runs to its end.
  /// The catalog is brought up to date (the edited folders scanned again) before this
  /// returns.
  public func run(
    _ batch: LibraryBatch, shouldStop: @escaping @Sendable () -> Bool = { false },
    progress: @escaping @Sendable (LibraryBatch.Outcome, BatchCounts) -> Void = { _, _ in }
  ) -> BatchCounts {
    var paths: [String: AssetID] = [:]
    var inputs: [BatchInput] = []
    var counts = BatchCounts(total: batch.ids.count)
    var folders = Set<String>()
    func report(_ id: AssetID, _ error: DarkroomError?) {
      if error == nil { counts.done += 1 } else { counts.failed += 1 }
      progress(
        .init(id: id, status: error == nil ? .done : .failed, error: error?.description), counts)
    }
    // Trash and restore move files in chunks: each folder is made durable once a chunk.
    var moves: [AssetID] = []
    func flushMoves() {
      guard !moves.isEmpty else { return }
      defer { moves = [] }
      let chunk = moves
      do throws(DarkroomError) {
        if batch.action == .trash { try trash(chunk) } else { try restore(chunk) }
        for id in chunk { report(id, nil) }
      } catch {
        // One of them failed: the others are done one at a time, to tell which.
        for id in chunk {
          do throws(DarkroomError) {
            let trashed = try asset(id).trashedAt != nil
            if trashed != (batch.action == .trash) {
              if batch.action == .trash { try trash([id]) } else { try restore([id]) }
            }
            report(id, nil)
          } catch {
            report(id, error)
          }
        }
      }
    }
    for id in batch.ids {
      do throws(DarkroomError) {
        let asset = try asset(id)
        switch batch.action {
        case .apply:
          guard asset.trashedAt == nil else {
            throw DarkroomError(.invalidArgument, file: asset.path, "is in the trash")
          }
          let path = try checkedPath(of: asset)
          paths[path] = id
          inputs.append(BatchInput(path: path, relativePath: asset.path))
          folders.insert(FilePath(path).parent)
        case .trash, .restore:
          guard !shouldStop() else {
            counts.notStarted += 1
            continue
          }
          moves.append(id)
          if moves.count == 100 { flushMoves() }
        case .revert:
          guard !shouldStop() else {
            counts.notStarted += 1
            continue
          }
          let path = try checkedPath(of: asset)
          if try batch.editor.revert(path) != .notEdited { folders.insert(FilePath(path).parent) }
          report(id, nil)
        }
      } catch {
        report(id, error)
      }
    }
    flushMoves()
    if case .apply(let graph) = batch.action, !inputs.isEmpty {
      var request = ApplyRequest(inputs: inputs, graph: graph)
      request.jobs = batch.jobs
      request.editor = batch.editor
      if let job = try? ApplyJob(request) {
        let before = counts
        let applied = job.run { [paths] outcome, applied in
          var now = before
          now.done += applied.done + applied.skipped
          now.failed += applied.failed
          guard let id = paths[outcome.file] else { return }
          progress(
            .init(
              id: id, status: outcome.status == .skipped ? .done : outcome.status,
              error: outcome.error), now)
        }
        counts.done += applied.done + applied.skipped
        counts.failed += applied.failed
        counts.notStarted += applied.notStarted
      }
    }
    if !folders.isEmpty {
      _ = try? scan(folders: folders.map { ScanRoot(folder: $0, recursive: false) })
    }
    return counts
  }
}
