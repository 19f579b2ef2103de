import Dispatch

/// A space that locks itself when nobody has used it for a while: a server holds a session's
/// space unlocked only as long as the session uses it, and no loop of the server's own has to
/// look for idle ones.
extension Space {
  /// Locks the space once it has gone `limit` without use (work with its keys under way,
  /// or ``touch(at:)``), and at `end` however much it is used. A timer waits for the
  /// deadline, not a poll: it fires when the space would be idle, and is set again when the
  /// space was used meanwhile. Asked again, the new limit and end replace the old.
  /// `whenLocked` runs once the timer has locked it (a server forgets the space then).
  package func lockWhenIdle(
    after limit: Duration, atLatest end: ContinuousClock.Instant? = nil,
    whenLocked: @escaping @Sendable () -> Void = {}
  ) {
    keeping.withLock { keeping in
      (keeping.idleLimit, keeping.end, keeping.lastUse) = (limit, end, .now)
    }
    // A Dispatch timer, on Dispatch's threads: not a task, which waits for a thread of the
    // cooperative pool, and that pool may be busy with blocking work for minutes.
    let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
    timer.setEventHandler { [weak self] in
      if self?.idleTimerFired() == true { whenLocked() }
    }
    idleTimer.withLock { old in
      defer { old = timer }
      return old
    }?.cancel()
    scheduleIdleTimer(timer)
    timer.resume()
    if isClosed { timer.cancel() }
  }

  /// At a deadline: locks the space if it is idle, else sets the timer for the next
  /// deadline. True if it locked the space now.
  private func idleTimerFired() -> Bool {
    if isClosed { return false }
    if lockIfIdle(at: .now) { return true }
    if let timer = idleTimer.withLock({ $0 }) { scheduleIdleTimer(timer) }
    return false
  }

  /// Sets `timer` to fire at the space's next deadline, once; cancels it when there is none.
  /// A wait is at most 30 s: Dispatch's clock stops while the machine sleeps and the
  /// deadlines' (`ContinuousClock`) does not, so a machine woken after its deadline finds
  /// the space locked within 30 s, not a whole idle limit later.
  private func scheduleIdleTimer(_ timer: DispatchSourceTimer) {
    guard let deadline = idleDeadline(at: .now) else { return timer.cancel() }
    let wait = min(max(.zero, deadline - .now), .seconds(30))
    timer.schedule(deadline: .now() + .nanoseconds(wait.nanoseconds), leeway: .milliseconds(100))
  }

  /// Marks the space used at `now` (a request that reads its state uses it too).
  package func touch(at now: ContinuousClock.Instant = .now) {
    keeping.withLock { keeping in keeping.lastUse = max(keeping.lastUse, now) }
  }

  /// Locks the space if at `now` it has gone its idle limit without use, or is past its end;
  /// true if it did (or was already locked). Work under way keeps it, but not past its end.
  @discardableResult
  package func lockIfIdle(at now: ContinuousClock.Instant = .now) -> Bool {
    let due = keeping.withLock { keeping -> Bool in
      keeping.locked || Self.deadline(keeping, at: now).map { now >= $0 } == true
    }
    if due { close() }
    return due
  }

  /// When the space is next due to lock itself, looked at `now`: nil when it never is (it
  /// is locked, or has no limit). While work is under way, a limit from now.
  func idleDeadline(at now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
    keeping.withLock { Self.deadline($0, at: now) }
  }

  /// The one rule: the idle limit after the last use (or after `now` while work is under
  /// way), and no later than the end; nil when locked or without a limit.
  private static func deadline(_ keeping: Keeping, at now: ContinuousClock.Instant)
    -> ContinuousClock.Instant?
  {
    guard !keeping.locked, let limit = keeping.idleLimit else { return nil }
    let idle = (keeping.users > 0 ? now : keeping.lastUse) + limit
    return keeping.end.map { min($0, idle) } ?? idle
  }
}
