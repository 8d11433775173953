//! Submesh allocation (\[VH94\] §4.3) and hypercube embedding (§4.4).

use nuce::plan::array2d::Rect;
use nuce::plan::packing::gray::{
    admissible_shapes, mesh_node, reflected_gray_code, HypercubeAllocator,
};
use nuce::plan::packing::{
    Grid, LevelPacking, Mesh, Packer, Scaling, SubmeshAllocator, TightPacking,
};
use proptest::prelude::*;

fn check_submeshes(subs: &[Rect], mesh: Mesh) -> Result<(), String> {
    let mut owner = vec![usize::MAX; mesh.size()];
    for (i, r) in subs.iter().enumerate() {
        if r.is_empty() {
            return Err(format!("grid {i} got no processor"));
        }
        if r.row_end() > mesh.q || r.col_end() > mesh.p {
            return Err(format!(
                "grid {i}: {r:?} outside the {}x{} mesh",
                mesh.p, mesh.q
            ));
        }
        for row in r.row..r.row_end() {
            for col in r.col..r.col_end() {
                let o = &mut owner[row * mesh.p + col];
                if *o != usize::MAX {
                    return Err(format!(
                        "processor ({row},{col}) given to grids {} and {i}",
                        *o
                    ));
                }
                *o = i;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn submeshes_disjoint_inside_nonempty(
        sides in prop::collection::vec((1u64..200, 1u64..200), 1..40),
        p in 1usize..40, q in 1usize..40,
        uniform in any::<bool>(), lp in any::<bool>(),
    ) {
        let grids: Vec<Grid> = sides.iter().map(|&(w, h)| Grid::new(w, h)).collect();
        let mesh = Mesh::new(p, q).unwrap();
        let scaling = if uniform { Scaling::Uniform } else { Scaling::NonUniform };
        let packer: Box<dyn Packer> = if lp { Box::new(LevelPacking::default()) } else { Box::new(TightPacking::default()) };
        let res = SubmeshAllocator::new(packer, scaling).allocate(&grids, mesh);
        if grids.len() > mesh.size() {
            prop_assert!(res.is_err());
        } else if res.is_ok() || 4 * grids.len() <= mesh.size() {
            // Near-full meshes may admit no scaled packing: an error, not a panic.
            let a = res.map_err(|e| TestCaseError::fail(e.to_string()))?;
            check_submeshes(&a.submeshes, mesh).map_err(TestCaseError::fail)?;
            let used: usize = a.submeshes.iter().map(Rect::area).sum();
            prop_assert!((a.utilization - used as f64 / mesh.size() as f64).abs() < 1e-12);
            prop_assert!(a.cost.total.is_finite() && a.cost.total >= a.cost.comp.max(a.cost.comm));
        }
    }
}

#[test]
fn uniform_scaling_keeps_shapes() {
    // Uniform scaling uses one factor: each submesh's sides are the grid's
    // packed extents times that factor, up to the floors (less than 1 each).
    let grids: Vec<Grid> = (0..12u64)
        .map(|i| Grid::new(40 + 7 * i, 30 + 3 * i))
        .collect();
    let mesh = Mesh::new(48, 32).unwrap();
    let a = SubmeshAllocator::new(TightPacking::default(), Scaling::Uniform)
        .allocate(&grids, mesh)
        .unwrap();
    let pk = &a.packing;
    let s = (mesh.p as f64 / pk.width as f64).min(mesh.q as f64 / pk.height as f64);
    for (i, r) in a.submeshes.iter().enumerate() {
        let (x0, y0, x1, y1) = pk.rect_of(&grids, i).unwrap();
        assert!((r.cols as f64 - (x1 - x0) as f64 * s).abs() < 1.0 + 1e-9);
        assert!((r.rows as f64 - (y1 - y0) as f64 * s).abs() < 1.0 + 1e-9);
    }
    let nu = SubmeshAllocator::new(TightPacking::default(), Scaling::NonUniform)
        .allocate(&grids, mesh)
        .unwrap();
    assert!(nu.utilization >= a.utilization);
}

#[test]
fn gray_embedding_maps_mesh_neighbours_to_cube_neighbours() {
    for d in 0..=10u32 {
        for (da, db) in admissible_shapes(d) {
            let (p, q) = (1u64 << da, 1u64 << db);
            let mut seen = vec![false; 1 << d];
            for i in 0..p {
                for j in 0..q {
                    let n = mesh_node(i, j, db);
                    assert!(!seen[n as usize], "node {n} used twice");
                    seen[n as usize] = true;
                    if i + 1 < p {
                        assert_eq!((n ^ mesh_node(i + 1, j, db)).count_ones(), 1);
                    }
                    if j + 1 < q {
                        assert_eq!((n ^ mesh_node(i, j + 1, db)).count_ones(), 1);
                    }
                }
            }
            // [VH94]'s matrix {a_i b_j} from the recursive codes.
            let (ca, cb) = (
                reflected_gray_code(da).unwrap(),
                reflected_gray_code(db).unwrap(),
            );
            for i in 0..p {
                for j in 0..q {
                    assert_eq!(mesh_node(i, j, db), (ca[i as usize] << db) | cb[j as usize]);
                }
            }
        }
    }
}

#[test]
fn hypercube_allocation_gives_disjoint_node_sets() {
    let grids: Vec<Grid> = (0..20u64)
        .map(|i| Grid::new(30 + (i * 13) % 50, 10 + (i * 7) % 30))
        .collect();
    let alloc = HypercubeAllocator {
        mesh: SubmeshAllocator::new(TightPacking::default(), Scaling::NonUniform),
    };
    let h = alloc.allocate(&grids, 8).unwrap();
    assert_eq!(h.da + h.db, 8);
    let mut seen = [false; 256];
    for nodes in &h.nodes {
        assert!(!nodes.is_empty());
        for &n in nodes {
            assert!(!seen[n as usize]);
            seen[n as usize] = true;
        }
    }
}
