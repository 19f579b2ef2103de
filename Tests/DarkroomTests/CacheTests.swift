import Foundation
import Testing

@testable import Darkroom

@Suite("Rendition cache", .timeLimit(.minutes(10)), .offThePool)
struct CacheTests {
  @Test("the second request is a hit with the same bytes; the first entry is on disk")
  func hit() throws {
    let folder = try Fixture.temporaryFolder()
    let service = Representations(cache: RenditionCache(folder: folder.url))
    let source = ImageSource.file(Fixture.sample("orientation-3.jpg"))
    let first = try service.rendition(of: source, RenditionSpec(.fullscreen))
    let second = try service.rendition(of: source, RenditionSpec(.fullscreen))
    #expect(!first.fromCache && second.fromCache)
    #expect(first.bytes == second.bytes)
    #expect((second.width, second.height) == (600, 400))
    var other = RenditionSpec(.fullscreen)
    other.quality = 60
    #expect(
      try service.rendition(of: source, other).fromCache == false, "another spec, another entry")
    #expect(service.cache?.stats().entries == 2)
  }

  @Test("a source changed in place, same size and mtime restored (touch -r), is re-rendered")
  func invalidationKeepsNoStaleRendition() throws {
    let folder = try Fixture.temporaryFolder()
    let service = Representations(cache: RenditionCache(folder: folder.file("cache").asURL))
    var bytes = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    let path = try folder.write("photo.jpg", bytes)
    var before = stat()
    #expect(stat(path, &before) == 0)
    let first = try service.rendition(of: .file(path), RenditionSpec(.fullscreen))
    #expect(try service.rendition(of: .file(path), RenditionSpec(.fullscreen)).fromCache)

    // Same length, different content: the camera model "Sample Scene" becomes "Sample Scenf".
    let model = Array("Sample Scene".utf8)
    let at = try #require(bytes.firstRange(of: model))
    bytes[at.upperBound - 1] = UInt8(ascii: "f")
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.write(contentsOf: Data(bytes))
    try handle.close()
    // What `touch -r` does: put the old access and modification times back, to the nanosecond.
    let times = [before.st_atim, before.st_mtim]
    #expect(utimensat(AT_FDCWD, path, times, 0) == 0)
    var after = stat()
    #expect(stat(path, &after) == 0)
    #expect(after.st_size == before.st_size)
    #expect(after.st_mtim.tv_sec == before.st_mtim.tv_sec)
    #expect(after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)

    let second = try service.rendition(of: .file(path), RenditionSpec(.fullscreen))
    #expect(!second.fromCache)
    #expect(second.bytes != first.bytes)
    #expect(try AssetMetadata.read(.data(second.bytes, name: "x")).cameraModel == "Sample Scenf")
  }

  @Test("the cache stays under its bound by evicting the least recently used entries")
  func eviction() throws {
    let folder = try Fixture.temporaryFolder()
    let cache = RenditionCache(folder: folder.url, limitBytes: 40_000)
    let service = Representations(cache: cache)
    let source = ImageSource.file(Fixture.sample("orientation-5.jpg"))
    var specs: [RenditionSpec] = []
    for quality in stride(from: 50, through: 90, by: 10) {
      var spec = RenditionSpec(.fullscreen)
      spec.quality = quality
      specs.append(spec)
    }
    // File times are coarse (a few ms): rather than sleep between steps, every entry is made
    // a second older after each one, so the order of use is the order of the steps.
    func age() throws {
      let objects = folder.file("objects")
      for path in try FileManager.default.subpathsOfDirectory(atPath: objects) {
        let full = objects + "/" + path
        let attributes = try FileManager.default.attributesOfItem(atPath: full)
        guard attributes[.type] as? FileAttributeType == .typeRegular,
          let modified = attributes[.modificationDate] as? Date
        else { continue }
        try FileManager.default.setAttributes(
          [.modificationDate: modified.addingTimeInterval(-1)], ofItemAtPath: full)
      }
    }
    _ = try service.rendition(of: source, specs[0])
    try age()
    _ = try service.rendition(of: source, specs[1])
    try age()
    #expect(try service.rendition(of: source, specs[0]).fromCache, "a hit makes specs[0] recent")
    for spec in specs.dropFirst(2) {
      try age()
      _ = try service.rendition(of: source, spec)
    }
    let stats = cache.stats()
    #expect(stats.bytes <= 40_000)
    #expect(stats.entries >= 1 && stats.entries < specs.count)
    #expect(try service.rendition(of: source, specs.last!).fromCache, "the newest stays")
    #expect(
      try !service.rendition(of: source, specs[1]).fromCache, "the least recently used went first")
  }

  @Test("a short entry (a write cut off before it reached the disk) is not served")
  func tornEntryIgnored() throws {
    let folder = try Fixture.temporaryFolder()
    let cache = RenditionCache(folder: folder.url)
    let hash = ContentHash.of(text: "x")
    let entry = try cache.store(
      source: hash, key: "k", kind: "thumbnail", edit: "original", bytes: [1, 2, 3, 4],
      fileExtension: "png", width: 1, height: 1)
    #expect(cache.lookup(source: hash, key: "k") != nil)
    try Data([1, 2]).write(to: entry.path.asURL)
    #expect(cache.lookup(source: hash, key: "k") == nil)
  }

  @Test("many processes asking at once all get complete, identical bytes; one entry is stored")
  func concurrentProcesses() throws {
    let folder = try Fixture.temporaryFolder()
    let cacheDir = folder.file("cache")
    var processes: [Process] = []
    for index in 0..<6 {
      let process = Process()
      process.executableURL = CLI.binary.asURL
      process.arguments = [
        "render", Fixture.sample("orientation-8.jpg"), "--rep", "thumbnail", "--size", "300",
        "-o", folder.file("out-\(index).jpg"), "--cache-dir", cacheDir,
      ]
      process.standardOutput = FileHandle.nullDevice
      try process.run()
      processes.append(process)
    }
    for process in processes {
      process.waitUntilExit()
      #expect(process.terminationStatus == 0)
    }
    let outputs = try (0..<6).map { try Fixture.bytes(folder.file("out-\($0).jpg")) }
    #expect(Set(outputs.map { ContentHash.of(bytes: $0) }).count == 1)
    let reference = try Renderer().render(
      .file(Fixture.sample("orientation-8.jpg")),
      {
        var spec = RenditionSpec(.thumbnail)
        spec.size = 300
        return spec
      }())
    #expect(outputs[0] == reference.bytes)
    #expect(RenditionCache(folder: cacheDir.asURL).stats().entries == 1)
  }

  @Test(
    "Images: concurrent requests share one render; a smaller cached one shows first; prefetched ones are not rendered again"
  )
  func images() async throws {
    let served = try ServedLibrary()
    let renders = Locked(0)
    var settings = Images.Settings()
    settings.observer.renderStarted = { renders.withLock { $0 += 1 } }
    let images = Images(served.library, settings: settings)
    let asset = try #require(try served.library.asset(atPath: served.root + "/orientation-6.jpg"))
    var small = RenditionSpec(.thumbnail)
    small.size = 200
    let renditions = try await withThrowingTaskGroup(of: Rendition.self) { group in
      for _ in 0..<4 { group.addTask { [small] in try await images.image(of: asset, small) } }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(renditions.allSatisfy { ($0.width, $0.height) == (200, 200) })
    #expect(Set(renditions.map(\.bytes)).count == 1)
    #expect(renders.withLock { $0 } == 1)

    var large = small
    large.size = 400
    let preview = try #require(images.cachedPreview(of: asset, large))
    #expect(preview.width == 200 && preview.fromCache)
    #expect(try await images.image(of: asset, large).width == 400)
    #expect(renders.withLock { $0 } == 2)

    var fit = RenditionSpec(.aspectThumbnail)
    fit.size = 64
    let ids = try served.ids()
    await images.prefetch(ids, fit)
    let afterPrefetch = renders.withLock { $0 }
    #expect(afterPrefetch == 2 + ids.count)
    let warmed = try await served.library.image(
      for: try #require(try served.library.asset(atPath: served.root + "/orientation-2.jpg")).id,
      fit)
    #expect(warmed.fromCache, "the library's shared Images reads the same disk cache")
    #expect((warmed.width, warmed.height) == (64, 43))
    #expect(renders.withLock { $0 } == afterPrefetch)
  }
}

extension String {
  var asURL: URL { URL(fileURLWithPath: self) }
}

extension CacheTests {
  @Test("eviction takes an entry's lock file and its emptied source folder with it")
  func evictionLeavesNoDebris() throws {
    let folder = try Fixture.temporaryFolder()
    let cache = RenditionCache(folder: folder.url, limitBytes: 30_000)
    let service = Representations(cache: cache)
    for sample in ["orientation-1.jpg", "orientation-2.jpg", "orientation-3.jpg", "gps.jpg"] {
      for quality in [60, 80] {
        var spec = RenditionSpec(.fullscreen)
        spec.quality = quality
        _ = try service.rendition(of: .file(Fixture.sample(sample)), spec)
      }
    }
    let objects = folder.file("objects")
    let files = try FileManager.default.subpathsOfDirectory(atPath: objects)
    let entries = files.filter { !($0.split(separator: "/").last?.hasPrefix(".") ?? true) }
    let locks = files.filter { $0.hasSuffix(".lock") }
    let stats = cache.stats()
    #expect(stats.entries < 8, "some were evicted")
    let entryFiles = entries.filter { $0.split(separator: "/").count == 3 }
    #expect(entryFiles.count == stats.entries)
    #expect(locks.count <= stats.entries, "no lock of an evicted entry: \(locks)")
    for shard in try FileManager.default.contentsOfDirectory(atPath: objects) {
      for source in try FileManager.default.contentsOfDirectory(atPath: objects + "/" + shard) {
        let inside = try FileManager.default.contentsOfDirectory(
          atPath: objects + "/" + shard + "/" + source)
        #expect(!inside.isEmpty, "no empty source folder")
      }
    }
  }
}

extension CacheTests {
  @Test("a cached fullscreen rendition for a smaller screen is a preview for a larger one")
  func fullscreenPreview() throws {
    let folder = try Fixture.temporaryFolder()
    let service = Representations(cache: RenditionCache(folder: folder.url))
    let source = ImageSource.file(Fixture.sample("orientation-6.jpg"))
    var small = RenditionSpec(.fullscreen)
    (small.screenWidth, small.screenHeight) = (300, 200)
    let made = try service.rendition(of: source, small)
    let preview = try #require(service.cachedPreview(of: source, RenditionSpec(.fullscreen)))
    #expect((preview.width, preview.height) == (made.width, made.height))
    #expect(preview.bytes == made.bytes)
    var tiny = RenditionSpec(.fullscreen)
    (tiny.screenWidth, tiny.screenHeight) = (150, 100)
    #expect(service.cachedPreview(of: source, tiny) == nil, "never larger than the box")
  }
}
