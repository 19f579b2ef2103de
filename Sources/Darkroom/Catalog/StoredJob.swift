import FoundationEssentials

/// A job over a library's assets as its catalog keeps it, so that it outlives the process
/// that ran it: what it does, over which assets, how each ended, and whether it is still
/// running. ``Library/jobRecord(_:)`` reads it as a ``JobRecord``.
package struct StoredJob: Sendable, Equatable {
  /// The job's id (what a client holds).
  package var id: String
  /// Its action's name: apply, revert, trash or restore.
  package var name: String
  /// Its action, encoded by the engine (see ``JobRecord``).
  package var action: String
  /// The assets it works on, in order.
  package var ids: [AssetID]
  /// running, finished or stopped, as its last writer left it.
  package var state: String
  /// The process that runs it (see ``ProcessStamp``).
  package var owner: String
  package var started: Double
  package var ended: Double?
  /// The assets it ended well (done, or already so).
  package var done: Set<AssetID> = []
  /// The assets it failed, with why, in the order they failed.
  package var failures: [Failure] = []

  package struct Failure: Sendable, Equatable {
    package var id: AssetID
    package var error: String
  }
}
