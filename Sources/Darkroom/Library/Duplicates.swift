import CHamming
import Dispatch
import FoundationEssentials

/// A group of assets that are the same photo: identical bytes, or, with near duplicates,
/// the same picture resized, recompressed, converted, lightly cropped or brightened.
package struct DuplicateGroup: Sendable, Codable, Equatable {
  /// Sorted by id (the first catalogued first).
  package var assets: [AssetID]
  /// All of them have the same bytes.
  package var exact: Bool
}

/// Finds pairs of 64-bit fingerprints within a Hamming distance without comparing every
/// pair (multi-index hashing): the bits are cut into four 16-bit blocks, and two prints
/// within `radius` bits agree within `radius / 4` bits on at least one block, so each
/// print is compared only with those sharing a block's value, or one near it.
struct FingerprintIndex {
  private let values: [UInt64]
  /// Per block, the prints by that block's value: `members[block][start[value]..<start[value + 1]]`.
  private var start: [[Int32]] = []
  private var members: [[Int32]] = []

  init(_ values: [UInt64]) {
    self.values = values
    for block in 0..<4 {
      var counts = [Int32](repeating: 0, count: 65537)
      for value in values { counts[Int(Self.block(value, block)) + 1] += 1 }
      for key in 0..<65536 { counts[key + 1] += counts[key] }
      var next = counts
      var items = [Int32](repeating: 0, count: values.count)
      for (index, value) in values.enumerated() {
        let key = Int(Self.block(value, block))
        items[Int(next[key])] = Int32(index)
        next[key] += 1
      }
      start.append(counts)
      members.append(items)
    }
  }

  private static func block(_ value: UInt64, _ block: Int) -> UInt16 {
    UInt16(truncatingIfNeeded: value >> UInt64(16 * block))
  }

  /// Every 16-bit value within `radius` bits of 0 (to be XORed with a block's value).
  private static func masks(radius: Int) -> [UInt16] {
    var result: [UInt16] = [0]
    var frontier: [(UInt16, Int)] = [(0, -1)]
    for _ in 0..<radius {
      var next: [(UInt16, Int)] = []
      for (current, last) in frontier {
        for bit in (last + 1)..<16 {
          let flipped = current | (1 << UInt16(bit))
          result.append(flipped)
          next.append((flipped, bit))
        }
      }
      frontier = next
    }
    return result
  }

  /// How far each block may be for two prints within `radius` bits, so that every such
  /// pair is near in at least one block: if each block differed by more than its radius,
  /// the prints would differ by at least the radii's sum plus 4, which these make more
  /// than `radius` (12 gives 3, 2, 2, 2: 1,108 patterns a bucket, not 4 x 697).
  static func blockRadii(_ radius: Int) -> [Int] {
    let total = max(0, radius - 3)
    return (0..<4).map { total / 4 + ($0 < total % 4 ? 1 : 0) }
  }

  /// The pairs (i < j) of prints within `radius` bits of each other.
  ///
  /// Each block is a join of its buckets: for every pattern of at most its radius in bits
  /// (``blockRadii(_:)``), every bucket is paired with the bucket that pattern away. The
  /// patterns are the outer loop and the buckets the inner one, so the bucket table and the
  /// prints (kept in bucket order) are read nearly in sequence, not at random. The
  /// comparisons are C (`darkroom_hamming_join`: one POPCNT instruction each where the
  /// processor has it), and the patterns are cut into tasks of about equal work, so that
  /// every core stays busy although the first block has five times the others' patterns.
  func pairs(within radius: Int) -> [(Int, Int)] {
    let radii = Self.blockRadii(radius)
    let (start, members, values) = (start, members, values)
    let blocks = (0..<4).map { block in
      (
        ordered: members[block].map { values[Int($0)] },
        occupied: (0..<65536).filter { start[block][$0 + 1] > start[block][$0] }.map(Int32.init),
        masks: Self.masks(radius: radii[block])
      )
    }
    let tasksPerBlock = blocks.map { ($0.masks.count + Self.masksPerTask - 1) / Self.masksPerTask }
    let tasks = (0..<4).flatMap { block in (0..<tasksPerBlock[block]).map { (block, $0) } }
    let found = Locked([(Int, Int)]())
    DispatchQueue.concurrentPerform(iterations: tasks.count) { task in
      let (block, part) = tasks[task]
      let masks = blocks[block].masks.dropFirst(part * Self.masksPerTask).prefix(Self.masksPerTask)
      var pairs: [(Int, Int)] = []
      var buffer = [Int32](repeating: 0, count: 2 * 4096)
      start[block].withUnsafeBufferPointer { starts in
        members[block].withUnsafeBufferPointer { items in
          blocks[block].ordered.withUnsafeBufferPointer { ordered in
            blocks[block].occupied.withUnsafeBufferPointer { keys in
              for mask in masks {
                // Each pair of buckets once: from the one whose key has the mask's top bit
                // clear.
                let top = mask == 0 ? 0 : UInt32(1) << UInt32(15 - mask.leadingZeroBitCount)
                var next = 0
                while next < keys.count {
                  var needed = 0
                  let count = buffer.withUnsafeMutableBufferPointer { out in
                    darkroom_hamming_join(
                      starts.baseAddress, ordered.baseAddress, keys.baseAddress, keys.count,
                      UInt32(mask), top, UInt32(radius), out.baseAddress, out.count / 2, &next,
                      &needed)
                  }
                  for n in 0..<count {
                    let (p, q) = (Int(buffer[2 * n]), Int(buffer[2 * n + 1]))
                    let (value, candidate) = (ordered[p], ordered[q])
                    // Counted once: by the first block in which the two are close.
                    let earlier = (0..<block).contains { previous in
                      (Self.block(value, previous) ^ Self.block(candidate, previous))
                        .nonzeroBitCount <= radii[previous]
                    }
                    if !earlier {
                      let (a, b) = (Int(items[p]), Int(items[q]))
                      pairs.append((min(a, b), max(a, b)))
                    }
                  }
                  if count == 0, next < keys.count, 2 * needed > buffer.count {
                    buffer = [Int32](repeating: 0, count: 2 * needed)
                  }
                }
              }
            }
          }
        }
      }
      found.withLock { $0 += pairs }
    }
    return found.withLock { $0 }
  }

  /// How many bit patterns a task of ``pairs(within:)`` joins (about 32 tasks at 12 bits).
  private static let masksPerTask = 35
}

extension Library {
  /// The default largest Hamming distance between the fingerprints of near duplicates.
  package static let nearDuplicateThreshold = 12
  /// How many more bits the hashes of the central quarters may differ by than the whole
  /// frames'.
  package static let centreSlack = 2
  /// The smallest side, in pixels, of a photo compared for look-alikes: under it (a 1x1
  /// spacer, an icon) 64 bits of fingerprint say nothing, and a flat one matches everything.
  package static let smallestLookAlike = 32
  /// How far apart two look-alikes' shapes may be: their aspect ratios within 10% (a copy
  /// cropped by a few percent stays; a 12000x800 panorama and a 3:2 photo never match).
  package static let lookAlikeAspect = 1.10

  /// Whether two photos' upright sizes are shapes a look-alike may have.
  static func sameShape(_ a: (width: Int, height: Int), _ b: (width: Int, height: Int)) -> Bool {
    guard a.width > 0, a.height > 0, b.width > 0, b.height > 0 else { return false }
    let ra = Double(a.width) / Double(a.height)
    let rb = Double(b.width) / Double(b.height)
    return max(ra, rb) / min(ra, rb) <= lookAlikeAspect
  }

  /// Groups of duplicates among the library's photos and videos outside the trash: same
  /// bytes, and with `near`, the same picture: the hashes of their whole frames within
  /// `threshold` bits, and those of their central quarters within `threshold` +
  /// ``centreSlack`` (which tells a photo from the same scene taken a little wider), of
  /// shapes within ``lookAlikeAspect`` and at least ``smallestLookAlike`` pixels a side. Fingerprints are made on first need, for photos that have none for their
  /// current content, `jobs` at a time, and kept in the catalog. Assets the user said are
  /// not duplicates (``keepApart(_:)``) are never grouped together.
  ///
  /// - Throws: `io` when the catalog cannot be read or written. A photo that cannot be
  ///   decoded is left out of the near comparison (it is reported in `problems`).
  package func duplicates(
    near: Bool = false, threshold: Int = Library.nearDuplicateThreshold,
    jobs: Int = ProcessorCount.value, problems: (@Sendable (DarkroomError) -> Void)? = nil
  ) throws(DarkroomError) -> [DuplicateGroup] {
    if near { try require(.nearFingerprints) }
    // The exact groups are read on another thread, while (with near) the fingerprints are
    // read here: the catalog has several readers, and at a million photos each read takes
    // the best part of a second.
    let root = self
    let exactRead = Locked<Result<[[AssetID]], DarkroomError>?>(nil)
    let reading = DispatchGroup()
    DispatchQueue.global().async(group: reading) {
      let result = Result { () throws(DarkroomError) in
        try root.catalogCall { try $0.exactDuplicates() }
      }
      exactRead.withLock { $0 = result }
    }
    let prints = near ? try fingerprints(jobs: jobs, problems: problems) : []
    reading.wait()
    guard let exactResult = exactRead.withLock({ $0 }) else {
      throw DarkroomError(.engine, "the exact duplicates were not read")
    }
    let exact = try exactResult.get()
    let distinct = try catalogCall { try $0.distinctPairs() }
    let apart = Set(distinct.map { "\($0.0)\($0.1)" })
    let keptApart = Set(distinct.flatMap { [$0.0, $0.1] })
    func allowed(_ a: AssetID, _ b: AssetID) -> Bool {
      !apart.contains(a < b ? "\(a)\(b)" : "\(b)\(a)")
    }
    var sets = UnionFind()
    // Which exact group each asset is in: a group is exact when all its members share one
    // (assets with the same content are always in the same exact group).
    var contents: [AssetID: Int] = [:]
    for (number, group) in exact.enumerated() {
      for id in group { contents[id] = number }
      for (a, b) in zip(group, group.dropFirst()) where allowed(a, b) { sets.union(a, b) }
    }
    if near {
      // Photos alike in everything compared (fingerprints and size: copies of one photo,
      // a burst of a still scene) are one photo to the index, each joined to the first:
      // 10,000 copies are one print, not 50 million pairs. A pair is joined by what its two
      // prints and sizes are, so the groups are the same; but a photo the user kept apart
      // from another is joined by its own pairs, so it stays in the index as itself.
      var firsts: [Int] = []
      var seen: [Likeness: Int] = [:]
      for (index, print) in prints.enumerated() {
        let likeness = Likeness(
          value: print.value, centre: print.centre, width: print.size.width,
          height: print.size.height)
        let free = !keptApart.contains(print.id)
        if free, let first = seen[likeness] {
          sets.union(prints[first].id, print.id)
          continue
        }
        if free { seen[likeness] = index }
        firsts.append(index)
      }
      let index = FingerprintIndex(firsts.map { prints[$0].value })
      for (a, b) in index.pairs(within: threshold) {
        let (i, j) = (firsts[a], firsts[b])
        guard
          (prints[i].centre ^ prints[j].centre).nonzeroBitCount <= threshold + Self.centreSlack,
          Self.sameShape(prints[i].size, prints[j].size), allowed(prints[i].id, prints[j].id)
        else { continue }
        sets.union(prints[i].id, prints[j].id)
      }
    }
    var groups: [DuplicateGroup] = []
    for members in sets.groups() where members.count > 1 {
      let first = contents[members[0]]
      let exact = first != nil && members.allSatisfy { contents[$0] == first }
      groups.append(DuplicateGroup(assets: members.sorted(), exact: exact))
    }
    return groups.sorted { $0.assets[0] < $1.assets[0] }
  }

  /// Remembers that these assets are not duplicates of each other: ``duplicates(near:threshold:jobs:problems:)``
  /// no longer groups them.
  package func keepApart(_ ids: [AssetID]) throws(DarkroomError) {
    try catalogCall { try $0.markDistinct(ids) }
  }

  /// Every photo's fingerprint, making those missing.
  private func fingerprints(jobs: Int, problems: (@Sendable (DarkroomError) -> Void)?)
    throws(DarkroomError) -> [(
      id: AssetID, value: UInt64, centre: UInt64, size: (width: Int, height: Int)
    )]
  {
    let stored = try catalogCall { try $0.fingerprints() }
    let missing = stored.filter { $0.value == nil }
    let made = Locked([Fingerprint]())
    let next = Locked(0)
    let root = self
    DispatchQueue.concurrentPerform(iterations: max(1, min(jobs, missing.count))) { _ in
      while true {
        let index = next.withLock { value -> Int in
          defer { value += 1 }
          return value
        }
        guard index < missing.count else { return }
        var print = missing[index]
        do throws(DarkroomError) {
          guard let asset = try root.catalogCall({ try $0.asset(print.id) }) else { continue }
          (print.value, print.centre) = try PerceptualHash.of(path: root.path(of: asset))
          made.withLock { $0.append(print) }
        } catch {
          problems?(error)
        }
      }
    }
    let new = made.withLock { $0 }
    try catalogCall { try $0.save(new) }
    let byID = Dictionary(new.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    return stored.compactMap { stored in
      let print = stored.value == nil ? byID[stored.id] ?? stored : stored
      guard let value = print.value, let centre = print.centre else { return nil }
      return (print.id, value, centre, (stored.width, stored.height))
    }
  }
}

/// What look-alikes are compared by: two photos alike in all of it are one to the index.
private struct Likeness: Hashable {
  var value: UInt64
  var centre: UInt64
  var width: Int
  var height: Int
}

/// Disjoint sets of asset ids.
struct UnionFind {
  private var parent: [AssetID: AssetID] = [:]

  private mutating func root(_ id: AssetID) -> AssetID {
    var current = id
    while let up = parent[current], up != current { current = up }
    var walk = id
    while let up = parent[walk], up != current {
      parent[walk] = current
      walk = up
    }
    return current
  }

  mutating func union(_ a: AssetID, _ b: AssetID) {
    if parent[a] == nil { parent[a] = a }
    if parent[b] == nil { parent[b] = b }
    let (ra, rb) = (root(a), root(b))
    if ra != rb { parent[max(ra, rb)] = min(ra, rb) }
  }

  mutating func groups() -> [[AssetID]] {
    var groups: [AssetID: [AssetID]] = [:]
    for id in Array(parent.keys) { groups[root(id), default: []].append(id) }
    return Array(groups.values)
  }
}
