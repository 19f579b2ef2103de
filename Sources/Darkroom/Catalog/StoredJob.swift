import FoundationEssentials

/// A job over a library's assets as its catalog keeps it, so that it outlives the process
/// that ran it: what it does, over which assets, how each ended, and whether it is still
/// running. ``Library/jobRecord(_:)`` reads it as a ``JobRecord``.
public struct StoredJob: Sendable, Equatable {
  /// The job's id (what a client holds).
  public var id: String
  /// Its action's name: apply, revert, trash or restore.
  public var name: String
  /// Its action, encoded by the engine (see ``JobRecord``).
  public var action: String
  /// The assets it works on, in order.
  public var ids: [AssetID]
  /// running, finished or stopped, as its last writer left it.
  public var state: String
  /// The process that runs it (see ``ProcessStamp``).
  public var owner: String
  public var started: Double
  public var ended: Double?
  /// The assets it ended well (done, or already so).
  public var done: Set<AssetID> = []
  /// The assets it failed, with why, in the order they failed.
  public var failures: [Failure] = []

  public struct Failure: Sendable, Equatable {
    public var id: AssetID
    public var error: String
  }
}
