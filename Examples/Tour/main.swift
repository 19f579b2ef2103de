// PhotoKit's tour, on Darkroom's public API only: `import Darkroom` and nothing else of the
// package (a test type-checks this file from outside the package, where only `public`
// declarations are seen, and runs it). Each step prints one line, `step: result`.
//
//   swift run DarkroomTour LIBRARY SPACE    LIBRARY: a folder of photos; SPACE: a new folder
import Darkroom
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
  print("usage: DarkroomTour LIBRARY SPACE (a folder of photos, and a new folder for a space)")
  exit(2)
}
let (root, spaceFolder) = (arguments[1], arguments[2])

do {
  // PHPhotoLibrary: a folder of photos with a catalog beside them.
  let library = try Library.create(at: root)

  // Bring the catalog up to date with the files.
  let scanned = try await library.scan()
  print("scan: \(scanned.added) added, \(scanned.damaged) damaged")

  // PHFetchResult: newest first, loaded a page at a time.
  var newestFirst = AssetQuery()
  newestFirst.sort = .dateDescending
  newestFirst.mediaType = .photo
  let photos = try await library.fetch(newestFirst)
  guard let first = photos.first else {
    print("fetch: no photos")
    exit(1)
  }
  print("fetch: \(photos.count) photos, newest \(try photos.asset(at: 0).name)")

  // PHCachingImageManager: a grid of thumbnails, then one photo at a screen's size.
  var grid: [Int] = []
  for id in photos.prefix(4) {
    grid.append(try await library.image(for: id, RenditionSpec(.thumbnail)).width)
  }
  print("thumbnails: \(grid.count) of \(grid.max() ?? 0) px")
  var screen = RenditionSpec(.fullscreen)
  (screen.screenWidth, screen.screenHeight) = (1280, 800)
  let fullscreen = try await library.image(for: first, screen)
  print("fullscreen: \(fullscreen.width)x\(fullscreen.height) \(fullscreen.format)")

  // PHContentEditingOutput: an edit kept as adjustment data, the original kept aside.
  let before = try library.asset(first).contentHash
  let adjustment = try await library.edit(first, with: FilterGraph.parse(spec: "noir"))
  print("edit: version \(adjustment.version), \(adjustment.graph.nodes.count) filter")
  let history = try await library.history(of: first)
  print("history: \(history.versions.count) version, current \(history.current)")
  let outcome = try await library.revert(first)
  let same = try library.asset(first).contentHash == before
  print(
    "revert: \(outcome == .notEdited ? "not edited" : "reverted"), original \(same ? "restored byte for byte" : "LOST")"
  )

  // performChanges for many assets: a job whose events report progress. `stop()` starts no
  // more items (cancelling the task that reads the events does the same); the events go on
  // to the final counts.
  let job = try library.apply(
    FilterGraph.parse(spec: "tone exposure=0.2"), to: .assets(Array(photos)))
  let reader = Task { () -> (done: Int, total: Int) in
    var counts = (done: 0, total: 0)
    for await event in job.events() {
      switch event {
      case .item(_, let now), .finished(let now): counts = (now.done, now.total)
      }
      if counts.done == 1 { job.stop() }
    }
    return counts
  }
  let stopped = await reader.value
  print("batch: stopped after \(stopped.done) of \(stopped.total)")

  // PHPhotoLibraryChangeObserver: changes to a fetch result as they are catalogued.
  let changes = try library.changes(of: AssetQuery())
  let watcher = Task { () throws -> [Int] in
    for try await change in changes where !change.insertedIndexes.isEmpty {
      return change.insertedIndexes
    }
    return []
  }
  let copy = root + "/copy-of-" + (try library.asset(first).name)
  try FileManager.default.copyItem(atPath: try library.path(of: library.asset(first)), toPath: copy)
  _ = try await library.scan()
  print("changes: inserted at \(try await watcher.value)")

  // An encrypted space: the same calls, on photos sealed with a password.
  let space = try Library.create(space: spaceFolder, password: Array("correct horse".utf8))
  let sealed = try space.add(file: copy)
  let inside = try await space.image(for: sealed.asset.id, RenditionSpec(.thumbnail))
  print("space: \(space.space?.count ?? 0) photo, thumbnail \(inside.width) px")
  space.close()
  do {
    _ = try await space.image(for: sealed.asset.id, RenditionSpec(.thumbnail))
    print("locked: still readable")
  } catch {
    print("locked: \(error.message)")
  }
} catch let error as DarkroomError {
  print("error: \(error)")
  exit(1)
} catch {
  print("error: \(error)")
  exit(1)
}
