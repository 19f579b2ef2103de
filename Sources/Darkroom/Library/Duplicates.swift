import Dispatch
import FoundationEssentials

/// A group of assets that are the same photo: identical bytes, or, with near duplicates,
/// the same picture resized, recompressed, converted, lightly cropped or brightened.
public struct DuplicateGroup: Sendable, Codable, Equatable {
  /// Sorted by id (the first catalogued first).
  public var assets: [AssetID]
  /// All of them have the same bytes.
  public var exact: Bool
}

/// Finds pairs of 64-bit fingerprints within a Hamming distance without comparing every
/// pair (multi-index hashing): the bits are cut into four 16-bit blocks, and two prints
/// within `radius` bits agree within `radius / 4` bits on at least one block, so each
/// print is compared only with those sharing a block's value, or one near it.
struct FingerprintIndex {
  private let values: [UInt64]
  private var blocks: [[UInt16: [Int32]]] = Array(repeating: [:], count: 4)

  init(_ values: [UInt64]) {
    self.values = values
    for (index, value) in values.enumerated() {
      for block in 0..<4 {
        blocks[block][Self.block(value, block), default: []].append(Int32(index))
      }
    }
  }

  private static func block(_ value: UInt64, _ block: Int) -> UInt16 {
    UInt16(truncatingIfNeeded: value >> UInt64(16 * block))
  }

  /// Every 16-bit value within `radius` bits of `value`.
  private static func neighbours(_ value: UInt16, radius: Int) -> [UInt16] {
    var result = [value]
    var frontier = [(value, -1)]
    for _ in 0..<radius {
      var next: [(UInt16, Int)] = []
      for (current, last) in frontier {
        for bit in (last + 1)..<16 {
          let flipped = current ^ (1 << UInt16(bit))
          result.append(flipped)
          next.append((flipped, bit))
        }
      }
      frontier = next
    }
    return result
  }

  /// The pairs (i < j) of prints within `radius` bits of each other.
  func pairs(within radius: Int) -> [(Int, Int)] {
    let blockRadius = radius / 4
    var pairs: [(Int, Int)] = []
    var seen = Set<Int32>()
    for (i, value) in values.enumerated() {
      seen.removeAll(keepingCapacity: true)
      for block in 0..<4 {
        for key in Self.neighbours(Self.block(value, block), radius: blockRadius) {
          for j in blocks[block][key] ?? [] where Int(j) > i && seen.insert(j).inserted {
            if (value ^ values[Int(j)]).nonzeroBitCount <= radius { pairs.append((i, Int(j))) }
          }
        }
      }
    }
    return pairs
  }
}

extension Library {
  /// The default largest Hamming distance between the fingerprints of near duplicates.
  public static let nearDuplicateThreshold = 10

  /// Groups of duplicates among the library's photos and videos outside the trash: same
  /// bytes, and with `near`, the same picture (perceptual fingerprints within `threshold`
  /// bits). Fingerprints are made on first need, for photos that have none for their
  /// current content, `jobs` at a time, and kept in the catalog. Assets the user said are
  /// not duplicates (``keepApart(_:)``) are never grouped together.
  ///
  /// - Throws: `io` when the catalog cannot be read or written. A photo that cannot be
  ///   decoded is left out of the near comparison (it is reported in `problems`).
  public func duplicates(
    near: Bool = false, threshold: Int = Library.nearDuplicateThreshold,
    jobs: Int = ProcessorCount.value, problems: (@Sendable (DarkroomError) -> Void)? = nil
  ) throws(DarkroomError) -> [DuplicateGroup] {
    let exact = try catalogCall { try $0.exactDuplicates() }
    let apart = Set(try catalogCall { try $0.distinctPairs() }.map { "\($0.0)\($0.1)" })
    func allowed(_ a: AssetID, _ b: AssetID) -> Bool {
      !apart.contains(a < b ? "\(a)\(b)" : "\(b)\(a)")
    }
    var sets = UnionFind()
    for group in exact {
      for (a, b) in zip(group, group.dropFirst()) where allowed(a, b) { sets.union(a, b) }
    }
    if near {
      let prints = try fingerprints(jobs: jobs, problems: problems)
      let index = FingerprintIndex(prints.map(\.1))
      for (i, j) in index.pairs(within: threshold) where allowed(prints[i].0, prints[j].0) {
        sets.union(prints[i].0, prints[j].0)
      }
    }
    var groups: [DuplicateGroup] = []
    for members in sets.groups() where members.count > 1 {
      let hashes = try Set(members.map { id throws(DarkroomError) in try asset(id).contentHash })
      groups.append(DuplicateGroup(assets: members.sorted(), exact: hashes.count == 1))
    }
    return groups.sorted { $0.assets[0] < $1.assets[0] }
  }

  /// Remembers that these assets are not duplicates of each other: ``duplicates(near:threshold:jobs:problems:)``
  /// no longer groups them.
  public func keepApart(_ ids: [AssetID]) throws(DarkroomError) {
    try catalogCall { try $0.markDistinct(ids) }
  }

  /// Every photo's fingerprint, making those missing.
  private func fingerprints(jobs: Int, problems: (@Sendable (DarkroomError) -> Void)?)
    throws(DarkroomError) -> [(AssetID, UInt64)]
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
          print.value = try PerceptualHash.of(path: root.path(of: asset))
          made.withLock { $0.append(print) }
        } catch {
          problems?(error)
        }
      }
    }
    let new = made.withLock { $0 }
    try catalogCall { try $0.save(new) }
    let values = Dictionary(new.map { ($0.id, $0.value) }, uniquingKeysWith: { a, _ in a })
    return stored.compactMap { print in
      (print.value ?? values[print.id] ?? nil).map { (print.id, $0) }
    }
  }
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
