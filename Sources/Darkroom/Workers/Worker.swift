import CSandbox
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// The loop a worker process runs: jobs in on standard input, replies out on standard output,
/// until its parent closes the pipe. Started by `WorkerPool` as `<executable> <arguments>`
/// (for the CLI, the hidden `darkroom worker`); a program that embeds Darkroom and wants
/// workers calls `Worker.serve()` from the entry point its pool starts.
package enum Worker {
  /// The exit status of a worker that refused to start because it holds descriptors
  /// besides its job socket, its reply pipe and standard error.
  static let refusedDescriptors: Int32 = 3

  /// Enters the sandbox, then serves jobs until the input ends. Returns the exit status.
  package static func serve() -> Int32 {
    // A descriptor of the parent's here (a listener, a client's connection, an epoll set)
    // is a way out that no sandbox rule can close: such a worker does not start.
    let inherited = openDescriptors()
    guard inherited.isEmpty else {
      let list = inherited.map { "\($0) (\(descriptorTarget($0)))" }.joined(separator: ", ")
      let why =
        inherited == [-1]
        ? "it cannot list its descriptors (/proc/self/fd)"
        : "it was handed descriptors besides 0, 1 and 2: \(list)"
      let line = Array("darkroom worker: refusing to start: \(why)\n".utf8)
      _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
      return refusedDescriptors
    }
    guard dr_die_with_parent() == 0 else { return 1 }
    TrustedFormats.decodingInWorkers()
    // Ctrl-C and job runners' SIGTERM reach the whole process group: the parent decides
    // when a worker stops, by closing its input or killing it.
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    // One job at a time, many of them: the allocator settings that keep a batch's memory
    // flat (as a batch keeps it), for this process's libvips threads.
    Vips.tuneMalloc(arenas: 2)
    var reason = [CChar](repeating: 0, count: 256)
    let environment = ProcessInfo.processInfo.environment
    // A background pool's worker (``WorkerPool/Configuration/background``), lowered before
    // libvips makes its threads, which take this thread's priority.
    if environment["DARKROOM_WORKER_BACKGROUND"] == "1" { _ = dr_lower_thread_priority() }
    var limits = DrSandboxLimits()
    limits.address_space_bytes = environment["DARKROOM_WORKER_ADDRESS_SPACE"].flatMap(Int.init) ?? 0
    limits.cpu_seconds = environment["DARKROOM_WORKER_CPU_SECONDS"].flatMap(UInt.init) ?? 0
    limits.open_files = 256
    let readable = environment["DARKROOM_WORKER_READABLE"] ?? ""
    let entered = readable.withCString { readable in
      limits.readable = readable
      return dr_sandbox_enter(&limits, &reason, reason.count)
    }
    if entered != 0 {
      let text = String(decoding: reason.prefix { $0 != 0 }.map(UInt8.init), as: UTF8.self)
      let line = Array("darkroom worker: cannot enter the sandbox: \(text)\n".utf8)
      _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
      return 1
    }
    var timedOut = false
    while let frame = Frames.read(STDIN_FILENO, timedOut: &timedOut) {
      let decoder = JSONDecoder()
      decoder.userInfo[.lenient] = true  // the parent checked the job; carry it as it came
      let reply: WorkerReply
      var bytes: [UInt8] = []
      do {
        let job = try decoder.decode(WorkerJob.self, from: Data(frame.header))
        // A file is handed open, after its job: this process can open none of its own.
        var handed: InputFile?
        if job.handsFile {
          let fd = dr_receive_descriptor(STDIN_FILENO)
          guard fd >= 0 else { return 1 }
          handed = try? InputFile(descriptor: fd, path: job.name)
        }
        if job.kind == .transcode {
          (reply, bytes) = (transcode(job, payload: frame.payload, file: handed), [])
        } else {
          (reply, bytes) = run(job, payload: frame.payload, file: handed)
        }
      } catch {
        reply = WorkerReply(
          error: DarkroomError(.engine, "the worker could not read its job: \(error)"))
      }
      guard let header = try? JSONEncoder().encode(reply),
        Frames.write(STDOUT_FILENO, header: Array(header), payload: bytes)
      else { return 1 }
    }
    return 0
  }

  private static func run(_ job: WorkerJob, payload: [UInt8], file: InputFile?) -> (
    WorkerReply, [UInt8]
  ) {
    do throws(DarkroomError) {
      var payload = payload
      if job.handsFile {
        guard let file else {
          throw DarkroomError(.unreadable, file: job.name, "cannot read the file it was handed")
        }
        // A header is read through the descriptor, only as far as it goes.
        if job.kind == .metadata {
          let metadata = try AssetMetadata.read(handed: file, name: job.name)
          return (WorkerReply(metadata: MetadataWire(metadata)), [])
        }
        // FFmpeg reads a video through the descriptor, only the parts it needs.
        if job.kind == .render, let spec = job.spec,
          let header = try VideoHeader.describe(file, name: job.name)
        {
          let rendition = try renderer(for: job).renderVideo(
            .file(file), name: job.name, header: header, spec)
          return (
            WorkerReply(width: rendition.width, height: rendition.height, format: rendition.format),
            rendition.bytes
          )
        }
        payload = try file.read(at: 0, count: file.size)
      }
      return try execute(job, payload: payload)
    } catch {
      return (WorkerReply(error: error.file == nil ? error.about(job.name) : error), [])
    }
  }

  /// A transcode's progress goes to the parent every this many frames (a 30 fps video
  /// encoded at its own pace: about four times a second).
  static let framesPerProgress = 8

  /// A transcode, its output's bytes sent to the parent as they come (a frame each, with the
  /// offset they go at: this process may grow no file), and its progress (every
  /// ``framesPerProgress`` frames), before the reply.
  private static func transcode(_ job: WorkerJob, payload: [UInt8], file: InputFile?)
    -> WorkerReply
  {
    do throws(DarkroomError) {
      guard let settings = job.transcode else {
        throw DarkroomError(.engine, "transcode job without its settings")
      }
      let source: VideoBytes
      if job.handsFile {
        guard let file else {
          throw DarkroomError(.unreadable, file: job.name, "cannot read the file it was handed")
        }
        source = .file(file)
      } else {
        source = .memory(payload)
      }
      var frames = 0
      let write = { (offset: Int, bytes: UnsafeRawBufferPointer) -> Bool in
        guard let header = try? JSONEncoder().encode(WorkerReply(writeAt: offset)) else {
          return false
        }
        return Frames.write(STDOUT_FILENO, header: Array(header), payload: Array(bytes))
      }
      let progress = { (done: Double, total: Double) -> Bool in
        frames += 1
        guard frames % Self.framesPerProgress == 0 else { return true }
        guard let header = try? JSONEncoder().encode(WorkerReply(progress: [done, total])) else {
          return true
        }
        return Frames.write(STDOUT_FILENO, header: Array(header), payload: [])
      }
      let outcome = try VideoTranscode.run(
        source, name: job.name, settings, graph: job.graph, write: write, progress: progress)
      return WorkerReply(transcoded: outcome)
    } catch {
      return WorkerReply(error: error.file == nil ? error.about(job.name) : error)
    }
  }

  private static func renderer(for job: WorkerJob) -> Renderer {
    var renderer = Renderer()
    renderer.maxPixels = job.maxPixels
    renderer.failOn = job.failOn
    renderer.timeLimit = nil  // the parent keeps the time, and kills a worker that overruns it
    return renderer
  }

  private static func execute(_ job: WorkerJob, payload: [UInt8]) throws(DarkroomError)
    -> (WorkerReply, [UInt8])
  {
    let renderer = renderer(for: job)
    let source = ImageSource.data(payload, name: job.name)
    switch job.kind {
    case .render:
      guard let spec = job.spec else { throw DarkroomError(.engine, "render job without spec") }
      let rendition = try renderer.render(source, spec)
      return (
        WorkerReply(width: rendition.width, height: rendition.height, format: rendition.format),
        rendition.bytes
      )
    case .edit:
      guard let recipe = job.recipe else {
        throw DarkroomError(.engine, "edit job without its recipe")
      }
      let metadata = try AssetMetadata.readUnplaced(source)
      let bytes = try renderer.renderEdit(source, metadata: metadata, recipe: recipe)
      return (WorkerReply(), bytes)
    case .metadata:
      return (WorkerReply(metadata: MetadataWire(try AssetMetadata.readUnplaced(source))), [])
    case .transcode:
      throw DarkroomError(.engine, "a transcode job runs through its own door (a bug)")
    case .probe:
      var results = [Int32](repeating: 0, count: Int(DR_PROBE_COUNT))
      let secret = job.probeSecret.flatMap { UnsafeRawPointer(bitPattern: UInt($0)) }
      // Descriptors first: the probe's own tries open and close some.
      var reply = WorkerReply()
      reply.descriptors = Dictionary(
        uniqueKeysWithValues: ([0, 1, 2] + openDescriptors()).map { ($0, descriptorTarget($0)) })
      reply.usableDescriptors = (job.probeDescriptors ?? []).filter { dr_descriptor_probe($0) != 0 }
      _ = dr_sandbox_probe(job.folder ?? "/tmp", getppid(), secret, &results)
      reply.probe = SandboxProbe.named(results)
      return (reply, [])
    }
  }
}

/// The descriptors open in this process above standard error.
func openDescriptors() -> [Int32] {
  var numbers = [Int32](repeating: 0, count: 64)
  let count = dr_open_descriptors(&numbers, Int32(numbers.count))
  // Unreadable /proc: the check cannot be made, and a worker refuses rather than guess.
  guard count >= 0 else { return [-1] }
  if Int(count) > numbers.count {
    numbers = [Int32](repeating: 0, count: Int(count) + 16)
    return Array(numbers.prefix(Int(dr_open_descriptors(&numbers, Int32(numbers.count)))))
  }
  return Array(numbers.prefix(Int(count)))
}

/// What descriptor `fd` of this process is (`socket:[123]`, `pipe:[45]`, a path), or `?`.
func descriptorTarget(_ fd: Int32) -> String {
  var buffer = [CChar](repeating: 0, count: 512)
  let length = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
  guard length > 0 else { return "?" }
  return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The ways out of the sandbox that `dr_sandbox_probe` tries, by name, for tests.
package enum SandboxProbe {
  /// The names, in the order of the probe's results.
  package static let names = [
    "socket", "process", "file", "mknod", "io_uring", "signal", "process_vm_readv", "pidfd",
    "ptrace", "read_outside",
  ]

  /// The probe's results by name: true for each way that worked.
  package static func named(_ results: [Int32]) -> [String: Bool] {
    Dictionary(uniqueKeysWithValues: zip(names, results.map { $0 != 0 }))
  }
}
