// darkroom-bench: what the shell benchmarks cannot time from outside.
//   DarkroomBench INPUT OUTPUT SPEC...   an edit through the Swift API, with no library,
//                                        original store or adjustment data (edit.sh)
//   DarkroomBench catalog-query [ROWS]   p50/p99 of filtered, sorted pages of 100 out of
//                                        ROWS (100,000) catalog rows, in process (scan.sh)
//   DarkroomBench places [N]           ns per nearest-place and per time-zone lookup, at N
//                                        (200,000) populated positions (metadata.sh)
//   DarkroomBench preview INPUT [RUNS] [FILTER]
//                                        the editor's preview of a slider change at screen
//                                        size (1280), from the cached screen rendition:
//                                        median ms for tone alone and for the whole panel
//                                        (editor.sh)
//   DarkroomBench catalog-scale DIR [ROWS]
//                                        a first scan of DIR's files into an empty catalog
//                                        and into one already holding ROWS (1,000,000)
//                                        synthetic rows (scan.sh)
import Darkroom
import Dispatch
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

func fail(_ message: String, _ status: Int32) -> Never {
  let bytes = Array((message + "\n").utf8)
  _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
  exit(status)
}

func say(_ text: String) {
  let bytes = Array((text + "\n").utf8)
  _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
  let start = DispatchTime.now().uptimeNanoseconds
  try body()
  return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func format(_ value: Double, _ digits: Int = 2) -> String {
  var scale = 1.0
  for _ in 0..<digits { scale *= 10 }
  return "\((value * scale).rounded() / scale)"
}

/// `count` synthetic rows in folders of 500 under `synthetic/`, with dates over ten years,
/// five cameras, a tenth videos, a fifth with a location, a twentieth edited.
func fillCatalog(_ catalog: SQLiteCatalog, rows count: Int, videos: Bool = true) throws {
  let cameras = ["Canon EOS R5", "NIKON Z 6", "FUJIFILM X100V", "Apple iPhone 15", "Sony A7 IV"]
  var generator = SystemRandomNumberGenerator()
  var start = 0
  while start < count {
    var changes = CatalogChanges()
    for n in start..<min(count, start + 10_000) {
      let video = videos && n % 10 == 0
      var asset = Asset(
        path: "synthetic/\(n / 500)/\(n).\(video ? "mp4" : "jpg")",
        contentHash: String(repeating: "0", count: 48)
          + String(UInt64(n), radix: 16)
          .leftPadded(to: 16),
        identity: FileIdentity(
          device: 1, inode: UInt64(n), size: 300_000 + Int64(n % 700_000), modified: 0,
          changed: 0),
        mediaType: video ? .video : .photo, format: video ? "mp4" : "jpeg", width: 4000,
        height: 3000,
        sortDate: 1.4e9 + Double(generator.next() % 315_360_000),
        addedAt: 1.7e9)
      asset.camera = video ? nil : cameras[n % cameras.count]
      if n % 5 == 0 {
        asset.latitude = -60 + Double(generator.next() % 120_000) / 1000
        asset.longitude = -180 + Double(generator.next() % 360_000) / 1000
      }
      if video { asset.duration = Double(n % 120) }
      if n % 20 == 0 { asset.adjustmentVersion = 1 }
      changes.upserts.append(asset)
    }
    try catalog.commit(changes)
    start += 10_000
  }
  try catalog.maintain()  // as a scan does after adding files
}

extension String {
  func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}

func temporaryFolder() -> String {
  var template = Array("/tmp/darkroom-bench-XXXXXX".utf8CString)
  guard let made = mkdtemp(&template) else { fail("cannot make a temporary folder", 1) }
  return String(cString: made)
}

func catalogQuery(rows: Int) throws {
  let folder = temporaryFolder()
  defer { _ = try? FileManager.default.removeItem(atPath: folder) }
  let catalog = try SQLiteCatalog(path: folder + "/catalog.sqlite")
  let fill = try seconds { try fillCatalog(catalog, rows: rows) }
  say("catalog-query: \(rows) rows written in \(format(fill, 1)) s")
  var queries: [(String, AssetQuery)] = []
  var q = AssetQuery()
  q.sort = .dateDescending
  queries.append(("all, -date", q))
  q.mediaType = .photo
  q.camera = "nikon"
  queries.append(("photos by camera, -date", q))
  q = AssetQuery()
  q.mediaType = .video
  q.minDuration = 30
  q.sort = .size
  queries.append(("videos >= 30 s, by size", q))
  q = AssetQuery()
  q.from = 1.5e9
  q.to = 1.6e9
  q.sort = .date
  queries.append(("a date range, by date", q))
  q = AssetQuery()
  q.near = (48.85, 2.29, 1500)
  queries.append(("near a place, by date", q))
  q = AssetQuery()
  q.album = .folder("synthetic/42")
  q.sort = .name
  queries.append(("a folder, by name", q))
  q = AssetQuery()
  q.edited = true
  q.sort = .dateDescending
  queries.append(("edited, -date", q))
  var generator = SystemRandomNumberGenerator()
  func percentile(_ times: [Double], _ p: Int) -> String {
    format(times.sorted()[min(times.count - 1, times.count * p / 100)] * 1000)
  }
  var all: [String: [Double]] = ["first": [], "cursor": [], "offset": []]
  for (name, query) in queries {
    let ids = try catalog.ids(query)
    var line: [String] = []
    for mode in ["first", "cursor", "offset"] {
      var times: [Double] = []
      for _ in 0..<100 {
        var page = query
        var offset = 0
        if mode == "cursor", ids.count > 100, query.sort != .album {
          page.after = ids[Int(generator.next() % UInt64(ids.count - 100))]
        } else if mode == "offset", ids.count > 100 {
          offset = Int(generator.next() % UInt64(ids.count - 100))
        }
        times.append(
          try seconds { _ = try catalog.assets(page, offset: offset, limit: 100) })
      }
      all[mode, default: []] += times
      line.append("\(mode) p50 \(percentile(times, 50)) p99 \(percentile(times, 99))")
    }
    say("  \(name): \(ids.count) match; page of 100 in ms: " + line.joined(separator: ", "))
  }
  for mode in ["first", "cursor", "offset"] {
    let times = all[mode] ?? []
    say(
      "catalog-query: \(mode) pages (\(times.count)): p50 \(percentile(times, 50)) ms, p99 \(percentile(times, 99)) ms (target p99 < 10 ms)"
    )
  }
}

/// Grouping `count` stored fingerprints (a hundredth of them near copies of others) into
/// near duplicates, through the library, as `darkroom duplicates --near` does.
func fingerprintIndex(count: Int) throws {
  let folder = temporaryFolder()
  defer { _ = try? FileManager.default.removeItem(atPath: folder) }
  let library = try Library.create(at: folder)
  let catalog = try SQLiteCatalog(path: library.catalogPath)
  try fillCatalog(catalog, rows: count, videos: false)
  var generator = SystemRandomNumberGenerator()
  var prints = try catalog.fingerprints()
  for index in prints.indices {
    if index % 100 == 1, let original = prints[index - 1].value {
      prints[index].value =
        original ^ (1 << (generator.next() % 64)) ^ (1 << (generator.next() % 64))
      prints[index].centre = prints[index - 1].centre
    } else {
      prints[index].value = generator.next()
      prints[index].centre = generator.next()
    }
  }
  try catalog.save(prints)
  var groups: [DuplicateGroup] = []
  let time = try seconds { groups = try library.duplicates(near: true) }
  say(
    "fingerprint-index: \(count) stored fingerprints grouped in \(format(time, 3)) s, \(groups.count) groups (target < 1 s)"
  )
}

func catalogScale(files: String, rows: Int) throws {
  let folder = temporaryFolder()
  defer { _ = try? FileManager.default.removeItem(atPath: folder) }
  // The files under `files` (in subfolders too), linked side by side.
  let sources = BatchInputs.collect([files]).inputs.map(\.path)
  let names = sources.indices.map { "\($0).jpg" }
  // Each run scans a library of its own (hard links to the files: nothing is copied), as
  // a process keeps a catalog open once opened.
  var run = 0
  func makeLibrary() throws -> String {
    run += 1
    let library = folder + "/library-\(run)"
    try FileManager.default.createDirectory(
      atPath: library + "/files", withIntermediateDirectories: true)
    for (source, name) in zip(sources, names) { _ = link(source, library + "/files/" + name) }
    return library
  }
  let template = folder + "/template.sqlite"
  let build = try seconds {
    let catalog = try SQLiteCatalog(path: template)
    try fillCatalog(catalog, rows: rows)
  }
  say("catalog-scale: \(rows) synthetic rows written in \(format(build, 1)) s")
  // A warm-up read, so that every scan finds the files in the page cache.
  let warm = try makeLibrary()
  _ = try Library.create(at: warm).scanBlocking(warm + "/files")
  func scan(startingFrom source: String?) throws -> Double {
    let library = try makeLibrary()
    let target = try Library.create(at: library).catalogPath
    if let source {
      try FileManager.default.copyItem(atPath: source, toPath: target)
    }
    var summary = ScanSummary()
    let time = try seconds {
      summary = try Library(root: URL(fileURLWithPath: library)).scanBlocking(library + "/files")
    }
    guard summary.added == names.count else {
      fail("scan added \(summary.added) of \(names.count)", 1)
    }
    return time
  }
  var empty: [Double] = []
  var full: [Double] = []
  for _ in 0..<3 {
    empty.append(try scan(startingFrom: nil))
    full.append(try scan(startingFrom: template))
  }
  empty.sort()
  full.sort()
  say(
    "catalog-scale: \(names.count) new files: empty catalog \(format(empty[1] * 1000, 0)) ms, with \(rows) rows \(format(full[1] * 1000, 0)) ms (median of 3): \(format(full[1] / empty[1]))x (target <= 1.2x)"
  )
}

/// Content hashing throughput (`ContentHash.of(bytes:)`) over a file held in memory, the
/// median of `runs`, against the same bytes through `sha256sum`'s rate printed by apply.sh.
func hashRate(_ path: String, runs: Int) throws {
  let bytes = try readWholeFile(path)
  var times: [Double] = []
  for _ in 0..<runs { times.append(seconds { _ = ContentHash.of(bytes: bytes) }) }
  let median = times.sorted()[times.count / 2]
  say(
    "hash: \(bytes.count) bytes in \(format(median * 1000, 1)) ms: \(format(Double(bytes.count) / median / 1e6, 0)) MB/s"
  )
}

/// Nearest-place and time-zone lookups at `count` populated positions (within about 20 km of
/// a place): the median of 5 passes over them, per lookup.
func placeLookups(count: Int) throws {
  guard let geo = GeoData.shared, let places = geo.places, let zones = geo.zones else {
    fail("places: no geodata (Scripts/install-geodata.sh)", 1)
  }
  var generator = SystemRandomNumberGenerator()
  var positions: [(Double, Double)] = []
  while positions.count < count {
    let guess = (
      Double.random(in: -55...70, using: &generator),
      Double.random(in: -180..<180, using: &generator)
    )
    guard let place = places.nearest(latitude: guess.0, longitude: guess.1) else { continue }
    positions.append(
      (
        min(90, max(-90, place.latitude + Double.random(in: -0.2...0.2, using: &generator))),
        min(180, max(-180, place.longitude + Double.random(in: -0.2...0.2, using: &generator)))
      ))
  }
  var checksum = 0
  func median(_ body: () -> Void) -> Double {
    (0..<5).map { _ in seconds(body) }.sorted()[2] / Double(count) * 1e9
  }
  let place = median {
    for (latitude, longitude) in positions {
      checksum &+= places.nearest(latitude: latitude, longitude: longitude)?.name.utf8.count ?? 0
    }
  }
  let zone = median {
    for (latitude, longitude) in positions {
      checksum &+= zones.zone(latitude: latitude, longitude: longitude)?.utf8.count ?? 0
    }
  }
  say("places: \(places.count) places; \(count) populated positions, median of 5 passes")
  say("nearest place: \(format(place / 1000, 2)) us per lookup")
  say("time zone: \(format(zone / 1000, 2)) us per lookup   (checksum \(checksum))")
}

/// The editor's preview of `runs` slider changes (each a different exposure, so nothing is
/// reused but the screen-size rendition, as the server's preview route has it cached).
func previewLatency(_ input: String, runs: Int, only: String? = nil) throws {
  var spec = RenditionSpec(.fullscreen)
  (spec.screenWidth, spec.screenHeight) = (1280, 1280)
  spec.format = .jpeg
  spec.metadata = .strip
  let screen = try Renderer().render(.file(input), spec)
  let panel = [
    "balance temperature=5200 tint=0.1", "light brilliance=0.3 whites=0.1 blacks=-0.05",
    "curve rgb=0:0,0.3:0.25,0.7:0.78,1:1", "vibrance 0.25",
    "hsl blue-saturation=-0.3 orange-luminance=0.2", "definition 0.3", "texture 0.2",
    "denoise luminance=0.2 colour=0.3", "sharpen amount=0.8", "vignette amount=-0.3",
    "grain amount=0.2",
  ]
  let each = panel.map { ($0.split(separator: " ")[0] + " alone (with tone)", [$0]) }
  let cases = [("tone alone", [String]())] + each + [("whole panel", panel)]
  for (name, rest) in cases where only.map({ name.hasPrefix($0) }) ?? true {
    var times: [Double] = []
    for run in 0..<runs {
      let graph = try FilterGraph.parse(
        specs: ["tone exposure=\(Double(run % 20) / 20) contrast=0.1"] + rest)
      let editor = Editor()
      times.append(
        try seconds { _ = try editor.preview(.data(screen.bytes, name: input), graph: graph) })
    }
    times.sort()
    say(
      "preview \(screen.width)x\(screen.height), \(name): median \(format(times[times.count / 2] * 1000, 1)) ms, p90 \(format(times[times.count * 9 / 10] * 1000, 1)) ms (\(runs) runs)"
    )
  }
}

let arguments = CommandLine.arguments
do {
  switch arguments.count > 1 ? arguments[1] : "" {
  case "help":
    say(
      "usage: DarkroomBench INPUT OUTPUT SPEC... | catalog-query [ROWS] | catalog-scale DIR [ROWS] | fingerprint-index [N] | hash FILE [RUNS] | places [N] | preview INPUT [RUNS]"
    )
  case "hash":
    guard arguments.count > 2 else { fail("usage: DarkroomBench hash FILE [RUNS]", 2) }
    try hashRate(arguments[2], runs: arguments.count > 3 ? Int(arguments[3]) ?? 9 : 9)
  case "preview":
    guard arguments.count > 2 else {
      fail("usage: DarkroomBench preview INPUT [RUNS] [FILTER: that row alone]", 2)
    }
    try previewLatency(
      arguments[2], runs: arguments.count > 3 ? Int(arguments[3]) ?? 30 : 30,
      only: arguments.count > 4 ? arguments[4] : nil)
  case "places":
    try placeLookups(count: arguments.count > 2 ? Int(arguments[2]) ?? 200_000 : 200_000)
  case "fingerprint-index":
    try fingerprintIndex(count: arguments.count > 2 ? Int(arguments[2]) ?? 100_000 : 100_000)
  case "catalog-query":
    try catalogQuery(rows: arguments.count > 2 ? Int(arguments[2]) ?? 100_000 : 100_000)
  case "catalog-scale":
    guard arguments.count > 2 else { fail("usage: DarkroomBench catalog-scale DIR [ROWS]", 2) }
    try catalogScale(
      files: arguments[2], rows: arguments.count > 3 ? Int(arguments[3]) ?? 1_000_000 : 1_000_000)
  default:
    guard arguments.count >= 4 else {
      fail(
        "usage: DarkroomBench INPUT OUTPUT SPEC... | catalog-query [ROWS] | catalog-scale DIR [ROWS]",
        2)
    }
    let bytes = try Editor().preview(
      .file(arguments[1]), graph: FilterGraph.parse(specs: Array(arguments[3...])))
    try AtomicFile.write(bytes, to: arguments[2])
  }
} catch {
  fail("DarkroomBench: \(error)", 1)
}
