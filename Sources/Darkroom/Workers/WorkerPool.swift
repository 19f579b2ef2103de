import CSandbox
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Worker processes that do pixel work for this one, so that a decoder that crashes (heap
/// corruption in a codec), hangs (an endless loop in a loader) or grows without bound costs
/// one file its result, never the batch or the server.
///
/// Each worker is a process of `executable` (the `darkroom` binary: `darkroom worker`), in a
/// sandbox (see `dr_sandbox_enter`), fed one job at a time over a pipe. A worker that dies is
/// reaped and its file gets one error line (`the decoder crashed (signal 6)`); one that runs
/// past the time limit is killed (`stopped after 5 s: ...`), and one past its CPU-time limit
/// (`cpuSeconds`) ends with SIGXCPU, said as such. Workers are started on first
/// need and retired after `jobsPerWorker` jobs or when their peak memory passes
/// `memoryHighWater`, which also ends the slow growth glibc's allocator shows in long runs.
///
/// ```swift
/// let pool = WorkerPool(.init(executable: "/usr/local/bin/darkroom", arguments: ["worker"]))
/// var renderer = Renderer()
/// renderer.workers = pool
/// let thumbnail = try renderer.render(.file("IMG_0001.jpg"), RenditionSpec(.thumbnail))
/// pool.shutDown()
/// ```
///
/// Safe to share: any number of threads may run jobs at once; each takes its own worker.
package final class WorkerPool: Sendable {
  /// How the pool starts and retires its workers. `Configuration` is a `Sendable` value
  /// type.
  package struct Configuration: Sendable {
    /// The program a worker runs, and its arguments (it must call `Worker.serve()`).
    package var executable: String
    /// The arguments a worker is started with: `["worker"]` for the `darkroom` binary.
    package var arguments: [String]
    /// Idle workers kept for the next job (more are started while jobs run concurrently).
    package var idleWorkers = 8
    /// Jobs after which a worker is replaced.
    package var jobsPerWorker = 200
    /// Peak resident memory (bytes) after which a worker is replaced.
    package var memoryHighWater = 1 << 30
    /// The address-space limit of each worker (0: none), against decompression bombs that
    /// get past the pixel limit.
    package var addressSpace = 16 << 30
    /// The CPU seconds a worker may use over its life (0: no limit), a backstop behind the
    /// time limit of each job.
    package var cpuSeconds = 3600
    /// libvips threads per worker (nil: libvips' default, one per core). A batch of N jobs
    /// on C cores gives each worker C / N, as the in-process path does.
    package var vipsThreads: Int?
    /// Extra environment for workers. Workers start with a clean environment: only
    /// ``inheritedEnvironment`` passes from this process, and these.
    package var environment: [String: String] = [:]

    /// The variables a worker takes from its parent's environment (by name, or by prefix
    /// for those ending in `*`): the locale, libvips' settings, the formats a person allowed
    /// or denied, tests' switches, FFmpeg's diagnostics (`DARKROOM_FFMPEG_WARNINGS`,
    /// `DARKROOM_FFMPEG_DEBUG`, `DARKROOM_TRANSCODE_TIMES`), the allocator's and the
    /// sanitizers'. Nothing else (the catalog's URL and its password, tokens, keys, proxies)
    /// reaches one.
    package static let inheritedEnvironment = [
      "PATH", "LANG", "LC_*", "TMPDIR", "LD_LIBRARY_PATH", "VIPS_*", "DARKROOM_ALLOW_FORMATS",
      "DARKROOM_DENY_FORMATS", "DARKROOM_TEST_*", "DARKROOM_FFMPEG_*", "DARKROOM_TRANSCODE_TIMES",
      "MALLOC_*", "GLIBC_TUNABLES", "ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS",
      "LSAN_OPTIONS",
    ]

    /// Tests only: start workers without closing this process's other descriptors, to see
    /// a worker refuse them.
    var closesInheritedDescriptors = true
    /// Workers for work that may wait (the gallery's thumbnails in the background): each
    /// lowers itself to nice 19 and the idle disk class as it starts. A process cannot take a
    /// lowered priority back, so these are never the ones people's renders use: such work
    /// gets a pool of its own.
    package var background = false

    /// The environment a worker starts with.
    func workerEnvironment(from parent: [String: String]) -> [String: String] {
      var environment = parent.filter { key, _ in
        Self.inheritedEnvironment.contains { name in
          name.hasSuffix("*") ? key.hasPrefix(name.dropLast()) : key == name
        }
      }
      environment["DARKROOM_WORKER_ADDRESS_SPACE"] = String(addressSpace)
      environment["DARKROOM_WORKER_CPU_SECONDS"] = String(cpuSeconds)
      // A crash is reported by the parent, in one line; the runtime's backtrace is noise.
      environment["SWIFT_BACKTRACE"] = "enable=no"
      if let vipsThreads { environment["VIPS_CONCURRENCY"] = String(vipsThreads) }
      if background { environment["DARKROOM_WORKER_BACKGROUND"] = "1" }
      for (key, value) in self.environment { environment[key] = value }
      return environment
    }

    /// A configuration that starts `executable` with `arguments`, with the default limits
    /// and no extra environment.
    package init(executable: String, arguments: [String] = ["worker"]) {
      self.executable = executable
      self.arguments = arguments
    }
  }

  /// What the pool has done, for tests and reports.
  package struct Counts: Sendable, Equatable {
    /// Workers started.
    package var started = 0
    /// Jobs whose worker died during the job (a crash, or an exit).
    package var crashed = 0
    /// Jobs stopped at the time limit, their worker killed.
    package var timedOut = 0
    /// Workers retired after ``Configuration/jobsPerWorker`` jobs or past
    /// ``Configuration/memoryHighWater``.
    package var recycled = 0
    /// Worker processes alive now, busy or idle.
    package var running = 0
  }

  /// How this pool starts and retires its workers.
  package let configuration: Configuration
  private let state = Locked<State>(State())

  private struct State {
    var idle: [WorkerProcess] = []
    var all: [pid_t: WorkerProcess] = [:]
    var counts = Counts()
    var closed = false
    var abandoning = false
  }

  /// A pool that starts workers as jobs need them; none is started yet.
  ///
  /// Making a pool sets this process to ignore `SIGPIPE`, so that a worker that dies cannot
  /// take its parent with it.
  /// Making a pool also makes this process non-dumpable (`PR_SET_DUMPABLE` 0): it holds
  /// what its workers must not see (keys of unlocked spaces, sessions, decrypted photos), and
  /// a worker running as the same user could otherwise read its memory or take its files.
  package init(_ configuration: Configuration) {
    self.configuration = configuration
    signal(SIGPIPE, SIG_IGN)  // a worker that died must not take its parent with it
    _ = dr_set_not_dumpable()
  }

  deinit { shutDown() }

  /// The process ids of its workers, running or idle (for tests).
  var workerIDs: [Int32] { state.withLock { Array($0.all.keys) } }

  /// What the pool has done so far.
  package var counts: Counts {
    state.withLock { state in
      var counts = state.counts
      counts.running = state.all.count
      return counts
    }
  }

  /// Runs one job in a worker: the reply and the bytes that came with it, at most
  /// `maxReply` of them (a worker that sends more is killed: no worker makes its parent
  /// allocate what it likes).
  func run(
    _ job: WorkerJob, payload: [UInt8] = [], file: InputFile? = nil, limit: Duration?,
    maxReply: UInt64
  ) throws(DarkroomError) -> (WorkerReply, [UInt8]) {
    try start(job, payload: payload, file: file, limit: limit, maxReply: maxReply).finish()
  }

  /// Sends one job to a worker and returns at once: its reply is read by
  /// ``SentJob/finish()``, so that the caller can work meanwhile (a scan hashes the file
  /// whose header a worker reads).
  ///
  /// With `cpuSeconds`, the job gets a worker of its own, started with that CPU limit (a
  /// transcode, whose work grows with the video's length) instead of an idle one.
  func start(
    _ job: WorkerJob, payload: [UInt8] = [], file: InputFile? = nil, limit: Duration?,
    maxReply: UInt64, cpuSeconds: Int? = nil
  ) throws(DarkroomError) -> SentJob {
    let worker = try acquire(for: job.name, cpuSeconds: cpuSeconds)
    guard let header = try? JSONEncoder().encode(job) else {
      // A worker of the job's own (a larger CPU limit) never joins the idle ones.
      if cpuSeconds == nil { release(worker) } else { _ = retire(worker, kill: false) }
      throw DarkroomError(.engine, file: job.name, "cannot encode the job for a worker")
    }
    let sent =
      Frames.write(worker.input, header: Array(header), payload: payload)
      && (file.map { dr_send_descriptor(worker.input, $0.descriptor) == 0 } ?? true)
    return SentJob(
      pool: self, worker: worker, job: job, sent: sent, deadline: limit.map { .now + $0 },
      limit: limit, maxReply: maxReply)
  }

  /// A job a worker has (see ``start(_:payload:file:limit:maxReply:)``). Its reply is read
  /// once; one never read retires its worker when it goes.
  final class SentJob {
    let pool: WorkerPool
    let worker: WorkerProcess
    let job: WorkerJob
    let sent: Bool
    let deadline: ContinuousClock.Instant?
    let limit: Duration?
    let maxReply: UInt64
    private var done = false

    fileprivate init(
      pool: WorkerPool, worker: WorkerProcess, job: WorkerJob, sent: Bool,
      deadline: ContinuousClock.Instant?, limit: Duration?, maxReply: UInt64
    ) {
      (self.pool, self.worker, self.job, self.sent) = (pool, worker, job, sent)
      (self.deadline, self.limit, self.maxReply) = (deadline, limit, maxReply)
    }

    deinit {
      if !done { _ = pool.retire(worker, kill: true) }
    }

    /// Waits for the reply (until the job's deadline). Progress frames before it (a
    /// transcode's) go to `progress`, and each renews the deadline; `progress` returning false
    /// kills the worker (its work is abandoned).
    func finish(
      progress: ((_ done: Double, _ total: Double) -> Bool)? = nil,
      write: ((_ offset: Int, _ bytes: [UInt8]) throws(DarkroomError) -> Void)? = nil
    ) throws(DarkroomError) -> (WorkerReply, [UInt8]) {
      done = true
      var deadline = self.deadline
      while true {
        var timedOut = false
        let frame =
          sent
          ? Frames.read(
            worker.output, deadline: deadline, maxPayload: maxReply, timedOut: &timedOut) : nil
        guard let frame else {
          let status = pool.retire(worker, kill: true)
          throw pool.lost(job.name, status: status, timedOut: timedOut, limit: limit)
        }
        guard let reply = try? JSONDecoder().decode(WorkerReply.self, from: Data(frame.header))
        else {
          _ = pool.retire(worker, kill: true)
          throw DarkroomError(.engine, file: job.name, "a worker sent a reply that cannot be read")
        }
        if let offset = reply.writeAt, let write {
          if let limit { deadline = .now + limit }
          do throws(DarkroomError) {
            guard offset >= 0 else {
              throw DarkroomError(.engine, file: job.name, "a worker wrote at a negative offset")
            }
            try write(offset, frame.payload)
          } catch {
            _ = pool.retire(worker, kill: true)
            throw error
          }
          continue
        }
        if let told = reply.progress, told.count == 2 {
          if let limit { deadline = .now + limit }
          if progress?(told[0], told[1]) == false {
            _ = pool.retire(worker, kill: true)
            throw DarkroomError.stopped(job.name)
          }
          continue
        }
        // A header read is light: it does not wear a worker out (decodes do, by memory growth).
        // A transcode wears one out whole: its CPU time counts against the worker's limit for
        // life, so the next encode gets a fresh one.
        if job.kind == .transcode {
          _ = pool.retire(worker, kill: false)
        } else {
          pool.release(worker, counting: job.kind != .metadata)
        }
        if let error = reply.error { throw error }
        return (reply, frame.payload)
      }
    }
  }

  /// Stops every worker now, busy or idle: the files they held fail with "abandoned", and
  /// no job starts after this (for a process asked to stop, once its grace is over).
  package func abandon() {
    let workers = state.withLock { state -> [WorkerProcess] in
      state.abandoning = true
      return Array(state.all.values)
    }
    for worker in workers { kill(worker.pid, SIGKILL) }
  }

  /// Closes idle workers' input (they exit) and kills any still running; waits for all.
  package func shutDown() {
    let workers = state.withLock { state -> [WorkerProcess] in
      state.closed = true
      state.idle = []
      return Array(state.all.values)
    }
    for worker in workers { _ = retire(worker, kill: true) }
  }

  fileprivate func lost(_ file: String, status: Int32, timedOut: Bool, limit: Duration?)
    -> DarkroomError
  {
    if state.withLock({ $0.abandoning }) { return Self.abandoned(file) }
    if timedOut, let limit {
      state.withLock { $0.counts.timedOut += 1 }
      return .timedOut(file, after: limit)
    }
    if status & 0x7f == SIGXCPU {
      state.withLock { $0.counts.timedOut += 1 }
      return DarkroomError(
        .timedOut, file: file, "stopped at its worker's limit of CPU time (SIGXCPU)")
    }
    state.withLock { $0.counts.crashed += 1 }
    if status & 0x7f == 0, (status >> 8) & 0xff == Worker.refusedDescriptors {
      return DarkroomError(
        .engine, file: file,
        "the worker refused to start: it was handed descriptors besides its own three")
    }
    if status & 0x7f != 0 {
      return DarkroomError(.engine, file: file, "the decoder crashed (signal \(status & 0x7f))")
    }
    return DarkroomError(.engine, file: file, "the worker exited (status \((status >> 8) & 0xff))")
  }

  /// The error of a file whose work was abandoned (see `abandon()`).
  private static func abandoned(_ file: String) -> DarkroomError {
    DarkroomError(
      .engine, file: file, "abandoned: darkroom was asked to stop before this file finished")
  }

  private func acquire(for file: String, cpuSeconds: Int? = nil) throws(DarkroomError)
    -> WorkerProcess
  {
    let (idle, abandoning) = state.withLock { state in
      (cpuSeconds == nil ? state.idle.popLast() : nil, state.abandoning)
    }
    if abandoning {
      if let idle { _ = retire(idle, kill: true) }
      throw Self.abandoned(file)
    }
    if let idle {
      // Killed while idle (out of memory, or by hand): reaped, and another one taken.
      guard idle.hasExited() else { return idle }
      _ = retire(idle, kill: false)
      return try acquire(for: file)
    }
    var given = configuration
    if let cpuSeconds { given.cpuSeconds = cpuSeconds }
    let configuration = given
    let worker = try SpawnThread.shared.run {
      Result { () throws(DarkroomError) in try WorkerProcess.start(configuration) }
    }.get()
    state.withLock { state in
      state.all[worker.pid] = worker
      state.counts.started += 1
    }
    return worker
  }

  fileprivate func release(_ worker: WorkerProcess, counting: Bool = true) {
    if counting { worker.jobs += 1 }
    let worn =
      worker.jobs >= configuration.jobsPerWorker
      || worker.peakMemory > configuration.memoryHighWater
    let kept = state.withLock { state -> Bool in
      guard !worn, !state.closed, state.idle.count < configuration.idleWorkers else {
        return false
      }
      state.idle.append(worker)
      return true
    }
    if !kept {
      if worn { state.withLock { $0.counts.recycled += 1 } }
      _ = retire(worker, kill: false)
    }
  }

  /// Ends a worker (politely: its input closed, so it exits; or with SIGKILL) and reaps it.
  /// Returns its wait status.
  fileprivate func retire(_ worker: WorkerProcess, kill force: Bool) -> Int32 {
    if force { kill(worker.pid, SIGKILL) }
    let status = worker.close()
    state.withLock { state in
      state.all[worker.pid] = nil
      state.idle.removeAll { $0 === worker }
    }
    return status
  }
}

/// One worker process and the parent's ends of its pipes. Used by one job at a time.
final class WorkerProcess: @unchecked Sendable {
  let pid: pid_t
  let input: Int32
  let output: Int32
  var jobs = 0

  /// Whether the process has ended (it is reaped later, by `close()`).
  func hasExited() -> Bool {
    var info = siginfo_t()
    return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0
      && info._sifields._sigchld.si_pid == pid
  }

  private init(pid: pid_t, input: Int32, output: Int32) {
    self.pid = pid
    self.input = input
    self.output = output
  }

  static func start(_ configuration: WorkerPool.Configuration) throws(DarkroomError)
    -> WorkerProcess
  {
    var toChild: [Int32] = [-1, -1]
    var fromChild: [Int32] = [-1, -1]
    // Jobs go over a Unix socket, which also carries the descriptors of the files they name.
    guard dr_socketpair_cloexec(&toChild) == 0 else { throw failure("socketpair") }
    guard dr_pipe_cloexec(&fromChild) == 0 else {
      Glibc.close(toChild[0])
      Glibc.close(toChild[1])
      throw failure("pipe")
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, toChild[0], STDIN_FILENO)
    posix_spawn_file_actions_adddup2(&actions, fromChild[1], STDOUT_FILENO)
    // Nothing else of this process's passes: a server's listener, its clients' connections
    // and its epoll sets are not close-on-exec, and a worker is where a hostile file runs.
    if configuration.closesInheritedDescriptors {
      let closing = dr_spawn_close_from(&actions, STDERR_FILENO + 1)
      guard closing == 0 else {
        for fd in toChild + fromChild { Glibc.close(fd) }
        throw DarkroomError(
          .engine,
          "cannot start a worker: closing descriptors: \(String(cString: strerror(closing)))")
      }
    }

    let environment = configuration.workerEnvironment(from: ProcessInfo.processInfo.environment)
    let arguments = [configuration.executable] + configuration.arguments
    let environmentLines = environment.map { "\($0.key)=\($0.value)" }

    var pid: pid_t = 0
    let status = withCStrings(arguments) { argv in
      withCStrings(environmentLines) { envp in
        posix_spawn(&pid, configuration.executable, &actions, nil, argv, envp)
      }
    }
    Glibc.close(toChild[0])
    Glibc.close(fromChild[1])
    guard status == 0 else {
      Glibc.close(toChild[1])
      Glibc.close(fromChild[0])
      throw DarkroomError(
        .engine,
        "cannot start a worker (\(configuration.executable)): \(String(cString: strerror(status)))")
    }
    return WorkerProcess(pid: pid, input: toChild[1], output: fromChild[0])
  }

  private static func failure(_ call: String) -> DarkroomError {
    DarkroomError(.engine, "cannot start a worker: \(call): \(String(cString: strerror(errno)))")
  }

  /// The worker's peak resident memory so far, in bytes (0 if it cannot be read).
  var peakMemory: Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return 0 }
    let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return kilobytes * 1024
  }

  /// Closes the pipes and waits for the process to end; its wait status.
  func close() -> Int32 {
    Glibc.close(input)
    Glibc.close(output)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return status
  }
}

/// Calls `body` with a NULL-terminated C array of `strings` (for posix_spawn).
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R)
  -> R
{
  var pointers = strings.map { strdup($0) }
  pointers.append(nil)
  defer { for pointer in pointers { free(pointer) } }
  return body(pointers)
}

extension WorkerPool: PixelWork {
  /// `AssetMetadata.read` of a file open here, in a worker it is handed to.
  func metadata(handing file: InputFile, name: String, limit: Duration?) throws(DarkroomError)
    -> AssetMetadata
  {
    try Self.metadata(of: startMetadata(handing: file, name: name, limit: limit))
  }

  /// `renderer.render(source, spec)`, in a worker.
  func render(_ source: ImageSource, _ spec: RenditionSpec, with renderer: Renderer)
    throws(DarkroomError) -> Rendition
  {
    let (reply, bytes) = try run(
      job(.render, source, renderer, spec: spec), payload: payload(source), file: open(source),
      limit: renderer.timeLimit, maxReply: Self.largestReply(spec, renderer))
    guard let format = reply.format else {
      throw DarkroomError(.engine, file: source.name, "a worker's rendition has no format")
    }
    return Rendition(bytes: bytes, format: format, width: reply.width, height: reply.height)
  }

  /// `renderer.renderEdit(source, ..., recipe)`, in a worker.
  func renderEdit(_ source: ImageSource, recipe: EditRecipe, with renderer: Renderer)
    throws(DarkroomError) -> [UInt8]
  {
    try run(
      job(.edit, source, renderer, recipe: recipe), payload: payload(source), file: open(source),
      limit: renderer.timeLimit, maxReply: Self.largestReply(pixels: renderer.maxPixels)
    ).1
  }

  /// `VideoTranscode.run` of `source` into `output`, in a worker handed both; a worker
  /// silent for ``transcodeSilence`` (no frame encoded) is killed.
  func transcode(
    _ video: VideoBytes, name: String, into output: Int32, _ settings: TranscodeSettings,
    graph: FilterGraph?, progress: @escaping (Double, Double) -> Bool, with renderer: Renderer
  ) throws(DarkroomError) -> TranscodeOutcome {
    var job = WorkerJob(
      kind: .transcode, name: name, maxPixels: renderer.maxPixels, failOn: renderer.failOn)
    job.transcode = settings
    job.graph = graph
    var file: InputFile?
    var payload: [UInt8] = []
    switch video {
    case .file(let input):
      job.handsFile = true
      file = input
    case .memory(let bytes): payload = bytes
    }
    let sent = try start(
      job, payload: payload, file: file, limit: Self.transcodeSilence, maxReply: 16 << 20,
      cpuSeconds: Self.transcodeCPUSeconds(settings, base: configuration.cpuSeconds))
    let reply = try sent.finish(progress: progress) { offset, bytes throws(DarkroomError) in
      let written = bytes.withUnsafeBytes { VideoTranscode.write($0, at: offset, to: output) }
      if !written { throw AtomicFile.writeError(name, errno) }
    }
    guard let outcome = reply.0.transcoded else {
      throw DarkroomError(.engine, file: name, "a worker's transcode says nothing of it")
    }
    return outcome
  }

  /// The CPU seconds a transcoding worker may use: its work grows with the video, so the
  /// pool's limit for a worker's life (an hour, against a decoder that runs away) would end
  /// the encode of a long video at that limit (SIGXCPU). Each second of the
  /// longest video the settings take may cost ``transcodeCPUPerSecond`` (an HEVC decode and
  /// an x264 encode at preset medium, 4K: about 5 here); a hung one is caught by
  /// ``transcodeSilence`` first. 0 (no limit) stays 0, and a transcode of any length
  /// (`maxSeconds` 0 or not finite) has none.
  static func transcodeCPUSeconds(_ settings: TranscodeSettings, base: Int) -> Int {
    let longest = settings.maxSeconds
    guard base > 0, longest > 0, longest.isFinite else { return 0 }
    let budget = (longest * transcodeCPUPerSecond).rounded(.up)
    return max(base, budget < Double(Int32.max) ? Int(budget) : Int(Int32.max))
  }
  static let transcodeCPUPerSecond = 16.0

  /// How long a transcoding worker may go without a word (its progress comes every 8 frames,
  /// and its bytes as they are written).
  static let transcodeSilence = Duration.seconds(120)

  /// `AssetMetadata.read(source)`, in a worker, stopped after `limit`.
  func metadata(_ source: ImageSource, limit: Duration?) throws(DarkroomError) -> AssetMetadata {
    try Self.metadata(
      of: start(
        job(.metadata, source, Renderer()), payload: payload(source), file: open(source),
        limit: limit, maxReply: 0))
  }

  /// Starts `AssetMetadata.read` of a file open here, in a worker it is handed to; the
  /// metadata is read with ``metadata(of:)``.
  func startMetadata(handing file: InputFile, name: String, limit: Duration?)
    throws(DarkroomError) -> SentJob
  {
    try start(job(.metadata, .file(name), Renderer()), file: file, limit: limit, maxReply: 0)
  }

  /// The metadata a started header read gives.
  static func metadata(of sent: SentJob) throws(DarkroomError) -> AssetMetadata {
    guard let metadata = try sent.finish().0.metadata?.metadata else {
      throw DarkroomError(.engine, file: sent.job.name, "a worker's metadata cannot be read")
    }
    return metadata
  }

  /// The most bytes a rendition of `spec` can take: its pixels at 16 bits in four bands,
  /// uncompressed, and room for its metadata.
  static func largestReply(_ spec: RenditionSpec, _ renderer: Renderer) -> UInt64 {
    let long = max(spec.screenWidth, spec.screenHeight)
    switch spec.representation {
    case .full: return largestReply(pixels: renderer.maxPixels)
    case .fullscreen: return largestReply(pixels: long * long)
    default: return largestReply(pixels: spec.targetWidth * spec.targetHeight)
    }
  }

  static func largestReply(pixels: Int) -> UInt64 {
    min(Frames.maxPayload, UInt64(max(0, pixels)) * 8 + (16 << 20))
  }

  private func job(
    _ kind: WorkerJob.Kind, _ source: ImageSource, _ renderer: Renderer,
    spec: RenditionSpec? = nil, recipe: EditRecipe? = nil
  ) -> WorkerJob {
    var job = WorkerJob(
      kind: kind, name: source.name, spec: spec, recipe: recipe,
      maxPixels: renderer.maxPixels, failOn: renderer.failOn)
    if case .file = source { job.handsFile = true }
    return job
  }

  /// A file source, opened here: a worker is handed the open file, never its path (it can
  /// open no file of its own). Errors are this process's, as if it read the file itself.
  private func open(_ source: ImageSource) throws(DarkroomError) -> InputFile? {
    guard case .file(let path) = source else { return nil }
    return try InputFile(path)
  }

  private func payload(_ source: ImageSource) -> [UInt8] {
    if case .data(let bytes, _) = source { return bytes }
    return []
  }

  /// Tests: which ways out of its sandbox a worker finds (``SandboxProbe/names``), trying to
  /// create files in `folder` and to read the bytes at `secret` in this process.
  func probeSandbox(folder: String, secret: UnsafeRawPointer?) throws(DarkroomError)
    -> [String: Bool]
  {
    try probe(folder: folder, secret: secret).probe ?? [:]
  }

  /// Tests: the descriptors a worker holds (number: what /proc names it), and which of
  /// `numbers` (held by this process) it can use.
  func probeDescriptors(_ numbers: [Int32]) throws(DarkroomError) -> (
    held: [Int32: String], usable: [Int32]
  ) {
    let reply = try probe(folder: "/nonexistent", secret: nil, descriptors: numbers)
    return (reply.descriptors ?? [:], reply.usableDescriptors ?? numbers)
  }

  private func probe(folder: String, secret: UnsafeRawPointer?, descriptors: [Int32] = [])
    throws(DarkroomError) -> WorkerReply
  {
    var job = WorkerJob(
      kind: .probe, name: "probe", maxPixels: 0, failOn: .error, folder: folder)
    job.probeSecret = secret.map { UInt64(UInt(bitPattern: $0)) }
    job.probeDescriptors = descriptors
    return try run(job, limit: .seconds(30), maxReply: 1 << 16).0
  }
}
