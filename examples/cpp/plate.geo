// A 2 × 2 plate with a circular hole, meshed by scripts/test_capi.sh for
// examples/cpp/mesh_graph.cpp: gmsh -2 plate.geo -format msh22 -clscale 0.15
lc = 0.05;
Point(1) = {0, 0, 0, lc}; Point(2) = {2, 0, 0, lc}; Point(3) = {2, 2, 0, lc}; Point(4) = {0, 2, 0, lc};
Point(5) = {1, 1, 0, lc}; Point(6) = {1.4, 1, 0, lc}; Point(7) = {0.6, 1, 0, lc};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Circle(5) = {6, 5, 7}; Circle(6) = {7, 5, 6};
Curve Loop(1) = {1, 2, 3, 4}; Curve Loop(2) = {5, 6};
Plane Surface(1) = {1, 2};
