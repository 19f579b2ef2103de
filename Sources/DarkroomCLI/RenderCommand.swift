import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

struct RenderCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "render",
    abstract: "Render a representation: full, fullscreen or (aspect-)thumbnail.",
    discussion: prose(
      """
      Representations, as in PhotoKit:
        full              the original pixels; orientation recorded, not
                          applied. In the source's own format it is a
                          byte-exact copy of the file.
        fullscreen        upright, fitted inside the screen (--screen,
                          default 1920x1080, turned to 1080x1920 for a
                          portrait photo); never upscaled.
        thumbnail         upright, exactly --size x --size, cropped to
                          fill (--crop).
        aspect-thumbnail  upright, aspect kept, fitted inside --size x
                          --size; never upscaled.
        video             the video of a live or motion photo, as it is:
                          a Live Photo's MOV (IMG_0001.MOV beside
                          IMG_0001.HEIC), or the MP4 a Google or Samsung
                          motion photo carries (NAME.video.mov or .mp4);
                          with --space, a motion photo's video read from
                          its sealed original.
        playback          a video (MP4, MOV) as an MP4 every browser plays:
                          H.264 High and AAC, upright, HDR tone-mapped to
                          SDR, fitted in --delivery's box (fast 854x480,
                          medium 1280x720, high 1920x1080; never up). A
                          video browsers play already is copied as it is.
                          With --space, made in memory and kept sealed.

      A photo edited in another program shows that edit, as Lightroom and Photos
      show the edited version: Lightroom's crs: settings (crop, angle, grayscale,
      exposure and tone) and darktable's crop, from a sidecar (NAME.EXT.xmp or
      NAME.xmp, which win) or the file's own XMP; `info` says what is rendered and
      what only approximated. full is then that edit at full size, upright, in the
      file's format. --original renders the file's own pixels.

      Display representations are converted to sRGB when the source has another
      colour profile. EXIF is kept with Orientation 1 and without its embedded
      thumbnail, unless --strip (no metadata) or --strip-location (no GPS).

      Each rendition is made on first request and cached; later requests for the
      same source content, representation and options are served from the cache
      without starting libvips. A source whose bytes change is never served a stale
      rendition.

      Output: -o FILE (format from its extension unless --format), -o - for standard
      output, -o DIR for several inputs; without -o, beside the input as
      NAME.<rep>.<ext>. The path written is printed. INPUT - reads standard input.

      Examples:
        darkroom render --rep fullscreen IMG_0001.jpg
        darkroom render --rep thumbnail --size 512 --crop attention \\
          IMG_0001.jpg -o thumb.webp
        cat photo.jpg | darkroom render - --rep aspect-thumbnail -o - > small.jpg
      """))

  @Argument(help: "Image files, or - for standard input.")
  var inputs: [String]

  @Option(
    name: .customLong("rep"),
    help: "full, fullscreen, thumbnail, aspect-thumbnail, video or playback.")
  var rep: RepresentationArgument = .fullscreen

  @Option(help: "For --rep playback: fast (480p), medium (720p) or high (1080p).")
  var delivery: PlaybackQuality = .medium

  /// The representation asked for (`video` is not one the renderer makes).
  private var representation: Representation { rep.representation ?? .fullscreen }

  @Option(
    name: [.short, .customLong("output")], help: "Output file, folder, or - for standard output.")
  var output: String?

  @Option(help: "jpeg, png, webp, avif, heic or tiff. Default: from -o, else the source's format.")
  var format: ImageFormat?

  @Option(parsing: .unconditional, help: "Encoder quality, 1-100 (JPEG, WebP, AVIF, HEIC).")
  var quality: Int = 85

  @Option(help: ArgumentHelp("Screen box for fullscreen.", valueName: "WxH"))
  var screen: String = "1920x1080"

  @Option(
    parsing: .unconditional, help: "Edge of the thumbnail and aspect-thumbnail box, in pixels.")
  var size: Int = 256

  @Option(help: "How thumbnail chooses its square: centre, attention or entropy.")
  var crop: ThumbnailCrop = .centre

  @Flag(help: "Remove all metadata, including the colour profile.")
  var strip = false

  @Flag(help: "Remove GPS position; keep the rest of EXIF.")
  var stripLocation = false

  @Flag(
    help:
      "Render the file's own pixels: from the original of a Darkroom edit, without another program's edit."
  )
  var original = false

  @Flag(help: "Render without reading or writing the cache.")
  var noCache = false

  @OptionGroup var cacheOptions: CacheOptions

  @OptionGroup var spaceOption: SpaceOption

  @OptionGroup var catalog: CatalogOption

  @OptionGroup var limits: LimitOptions

  @OptionGroup var graceOption: GraceOption

  @Flag(help: "Print one JSON object per rendition (input, output, size, format, cached).")
  var json = false

  func validate() throws {
    guard (1...100).contains(quality) else {
      throw ValidationError(
        "Expected integer between 1 and 100 for --quality but received \(quality)")
    }
    guard (1...100_000).contains(size) else {
      throw ValidationError("Expected integer between 1 and 100000 for --size but received \(size)")
    }
    guard screenBox != nil else {
      throw ValidationError("Expected WxH (such as 1920x1080) for --screen but received \(screen)")
    }
    if strip && stripLocation {
      throw ValidationError(
        "--strip already removes the location; give one of --strip and --strip-location")
    }
    if spaceOption.folder != nil && output == nil {
      throw ValidationError(
        "With --space, give -o FILE, -o DIR or -o -: nothing is written beside a space's assets")
    }
    if several, output == "-" {
      throw ValidationError("Several inputs cannot all go to standard output; give -o a folder")
    }
    if several, let output, outputFolder == nil {
      throw ValidationError("Several inputs need -o to name a folder, but \(output) names a file")
    }
    if inputs.filter({ $0 == "-" }).count > 1 {
      throw ValidationError("Standard input (-) can be read only once")
    }
    if rep == .video {
      if inputs.contains("-") {
        throw ValidationError("--rep video reads files or a space's assets: not standard input")
      }
      return
    }
    if let output, output != "-", outputFolder == nil, rep != .playback {
      let ext = URL(fileURLWithPath: output).pathExtension
      if let named = ImageFormat(fileExtension: ext) {
        if let format, format != named {
          throw ValidationError(
            "--format \(format.rawValue) contradicts the extension of \(output)")
        }
      } else if ImageFormat.readOnlyExtensions.contains(ext.lowercased()) {
        throw ValidationError(
          "Darkroom does not write \(ext.uppercased()) ('\(output)'): it writes JPEG, PNG, WebP, AVIF, HEIC and TIFF"
        )
      } else if format == nil {
        throw ValidationError(
          "Cannot tell the output format from '\(output)': use an extension such as .jpg, .png, .webp, or --format (a folder ends with /)"
        )
      }
    }
  }

  /// Several inputs (or a folder) make one rendition each.
  private var several: Bool { inputs.count > 1 || inputs.contains(where: isFolder) }

  /// The folder -o names: an existing folder, a path ending in /, or, for several inputs, a
  /// path without an image extension (made if missing). nil for a file or standard output.
  private var outputFolder: String? {
    guard let output, output != "-" else { return nil }
    var folder = output
    while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
    if output.hasSuffix("/") || isFolder(output) { return folder }
    let ext = URL(fileURLWithPath: output).pathExtension
    if several && ImageFormat(fileExtension: ext) == nil { return folder }
    return nil
  }

  private var screenBox: (Int, Int)? {
    let parts = screen.lowercased().split(separator: "x")
    guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (1...100_000).contains(w),
      (1...100_000).contains(h)
    else { return nil }
    return (w, h)
  }

  func run() throws {
    limits.formats.allow()  // before folders are listed: allowed formats are inputs too
    if rep == .video { return try writeVideos() }
    if rep == .playback { return try writePlayback() }
    let items: JobItems
    var library: Library?
    var missing: [DarkroomError] = []
    if let (ids, space) = try spaceOption.assets(inputs) {
      (items, library) = (.assets(ids), space)
    } else {
      // Folders are walked for images; their outputs mirror the folder's tree under -o.
      var (files, notFound) = BatchInputs.collect(try resolveItems(inputs.filter { $0 != "-" }))
      if inputs.contains("-") { files.insert(BatchInput(path: "-", relativePath: "stdin"), at: 0) }
      (items, missing) = (.files(files), notFound)
    }
    missing.forEach(reportError)
    if let folder = outputFolder, !isFolder(folder) {
      do {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
      } catch {
        reportError(DarkroomError(.io, file: folder, "cannot create the output folder: \(error)"))
        throw WorkFailed()
      }
    }
    let target = RenderTarget(
      output: output, folder: outputFolder, representation: representation, json: json)
    var step = RenderStep(spec(for: outputFolder == nil ? output : nil)) {
      item, rendition throws(DarkroomError) in try target.write(item, rendition)
    }
    step.fromOriginal = original
    step.useCache = !noCache
    step.cache = cacheOptions.settings
    if inputs.contains("-") { step.standardInput = try StandardInput.readAll() }
    var request = JobRequest(.render(step), on: items, in: library)
    request.settings = limits.settings()
    request.workers = .contained
    let end = try runJob(request, grace: graceOption.grace, command: "render") { outcome, _ in
      if outcome.failure != nil { return reportFailure(outcome) }
      guard let made = outcome.rendition, let written = outcome.output else { return }
      if json {
        let record = RenderRecord(
          input: outcome.file, id: outcome.id, output: written,
          representation: target.representation.rawValue, width: made.width, height: made.height,
          format: made.format.rawValue, bytes: made.bytes, cached: made.cached)
        printLine((try? jsonText(record, pretty: false)) ?? "")
      } else if written != "-" {
        printLine(written)
      }
    }
    try end.check(failed: !missing.isEmpty)
  }

  /// What `--rep video` and `--rep playback` read: a space's assets by id or name, read
  /// through its library (named ones by the reference given; all of them, for no inputs,
  /// by id); else the files named.
  private func targets() throws -> (
    space: (ids: [AssetID], library: Library)?, targets: [(input: String, id: AssetID?)]
  ) {
    let space = try spaceOption.assets(inputs)
    guard let ids = space?.ids else { return (nil, inputs.map { ($0, nil) }) }
    return (
      space,
      ids.count == inputs.count
        ? Array(zip(inputs, ids.map { Optional($0) })) : ids.map { ($0.rawValue, $0) }
    )
  }

  /// `--rep video`: each input's video, copied as it is (no decoding) to -o or beside it.
  private func writeVideos() throws {
    var failed = false
    let (space, targets) = try targets()
    for (input, id) in targets {
      do throws(DarkroomError) {
        let (video, bytes) =
          if let id, let library = space?.library {
            (try library.motionVideo(of: id), try library.motionVideoBytes(of: id))
          } else {
            try MotionPhoto.videoBytes(ofStill: input)
          }
        let name =
          URL(fileURLWithPath: space == nil ? input : video.path).deletingPathExtension()
          .lastPathComponent + ".video." + video.format
        let destination: String
        if output == "-" {
          guard isatty(STDOUT_FILENO) == 0 else {
            throw DarkroomError(
              .invalidArgument, file: input,
              "refusing to write video bytes to a terminal; use -o FILE or a pipe")
          }
          writeAll(STDOUT_FILENO, bytes)
          destination = "-"
        } else {
          destination = videoDestination(of: input, named: name)
          try AtomicFile.write(bytes, to: destination)
        }
        if json {
          let record = VideoRecord(
            input: input, output: destination, format: video.format, bytes: bytes.count,
            embedded: video.range != nil)
          printLine((try? jsonText(record, pretty: false)) ?? "")
        } else if destination != "-" {
          printLine(destination)
        }
      } catch {
        reportError(error)
        failed = true
      }
    }
    if failed { throw WorkFailed() }
  }

  /// Where a video written for `input` goes: into -o's folder (made if need be) as `name`,
  /// to -o itself, or beside the input as `name`.
  private func videoDestination(of input: String, named name: String) -> String {
    if let folder = outputFolder {
      try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
      return folder + "/" + name
    }
    if let output { return output }
    let parent = URL(fileURLWithPath: input).deletingLastPathComponent().path
    return (input.contains("/") ? parent + "/" : "") + name
  }

  /// `--rep playback`: each input video as an MP4 every browser plays, to -o or beside it as
  /// NAME.playback.mp4.
  private func writePlayback() throws {
    var failed = false
    if output == "-" {
      reportError(
        DarkroomError(.invalidArgument, "--rep playback writes files: give -o FILE or DIR"))
      throw WorkFailed()
    }
    let (space, targets) = try targets()
    for (input, id) in targets {
      do throws(DarkroomError) {
        let shownName =
          if let id, let library = space?.library { try library.asset(id).name } else { input }
        let name = URL(fileURLWithPath: shownName).deletingPathExtension().lastPathComponent
        let destination = videoDestination(of: input, named: name + ".playback.mp4")
        let made =
          if let id, let library = space?.library {
            try library.writePlayback(of: id, to: destination, quality: delivery)
          } else {
            try Library.writePlayback(
              ofFile: input, to: destination, quality: delivery, settings: limits.settings())
          }
        if json {
          let record = PlaybackRecord(
            input: input, output: destination, width: made.width, height: made.height,
            bytes: made.byteSize, copied: made.cached)
          printLine((try? jsonText(record, pretty: false)) ?? "")
        } else {
          printLine(destination)
        }
      } catch {
        reportError(error)
        failed = true
      }
    }
    if failed { throw WorkFailed() }
  }

  private func spec(for output: String?) -> RenditionSpec {
    var spec = RenditionSpec(representation)
    if let (w, h) = screenBox { (spec.screenWidth, spec.screenHeight) = (w, h) }
    spec.size = size
    spec.crop = crop
    spec.quality = quality
    spec.metadata = strip ? .strip : stripLocation ? .stripLocation : .keep
    spec.format =
      format
      ?? output.flatMap { ImageFormat(fileExtension: URL(fileURLWithPath: $0).pathExtension) }
    return spec
  }

}

/// Where `render` writes: standard output, a file, or a folder mirroring the inputs.
private struct RenderTarget: Sendable {
  var output: String?
  /// The folder -o names, if it names one.
  var folder: String?
  var representation: Representation
  var json: Bool

  /// Writes one rendition and returns where (`-`: standard output).
  func write(_ item: JobItem, _ rendition: Rendition) throws(DarkroomError) -> String {
    let input = item.path
    if output == "-" || (output == nil && input == "-") {
      guard isatty(STDOUT_FILENO) == 0 else {
        throw DarkroomError(
          .invalidArgument, file: input,
          "refusing to write image bytes to a terminal; use -o FILE or a pipe")
      }
      writeAll(STDOUT_FILENO, rendition.bytes)
      return "-"
    }
    let name = "\(stem(of: item)).\(representation.rawValue).\(rendition.format.fileExtension)"
    if let folder, item.id != nil {
      // A space's assets may share a name: each gets a name of its own.
      return try AtomicFile.writeNew(rendition.bytes, name: name, in: folder)
    }
    let destination = outputPath(for: item, name: name)
    if item.id == nil, input != "-", sameFile(destination, input) {
      throw DarkroomError(
        .invalidArgument, file: input, "the output would replace the input; choose another -o")
    }
    try AtomicFile.write(rendition.bytes, to: destination)
    return destination
  }

  private func stem(of item: JobItem) -> String {
    item.path == "-"
      ? "stdin" : URL(fileURLWithPath: item.path).deletingPathExtension().lastPathComponent
  }

  private func outputPath(for item: JobItem, name: String) -> String {
    let input = item.path
    if let folder {
      // Mirror the input's folder under the output folder.
      let below = item.relativePath.split(separator: "/").dropLast().joined(separator: "/")
      let target = below.isEmpty ? folder : folder + "/" + below
      try? FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
      return target + "/" + name
    }
    if let output { return output }
    guard let slash = input.lastIndex(of: "/") else { return name }
    return String(input[...slash]) + name
  }
}

private struct RenderRecord: Encodable {
  var input: String
  var id: String?
  var output, representation: String
  var width, height: Int
  var format: String
  var bytes: Int
  var cached: Bool
}

private struct VideoRecord: Encodable {
  var input, output, format: String
  var bytes: Int
  var embedded: Bool
  let representation = "video"
}

private struct PlaybackRecord: Encodable {
  var input, output: String
  var width, height, bytes: Int
  /// The input plays anywhere already: copied as it is.
  var copied: Bool
  let representation = "playback"
}

extension PlaybackQuality: ExpressibleByArgument {}

/// What `--rep` takes: the renderer's representations, and `video`.
enum RepresentationArgument: String, ExpressibleByArgument, CaseIterable {
  case full, fullscreen, thumbnail
  case aspectThumbnail = "aspect-thumbnail"
  case video
  case playback

  var representation: Representation? { Representation(rawValue: rawValue) }
}
extension ImageFormat: ExpressibleByArgument {
  public init?(argument: String) {
    self.init(fileExtension: argument)
  }
}
extension ThumbnailCrop: ExpressibleByArgument {
  public init?(argument: String) {
    self.init(rawValue: argument == "center" ? "centre" : argument)
  }
}
