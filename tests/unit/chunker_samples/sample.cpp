#include <string>
#include <vector>

namespace geo {

// A closed polygon.
class Polygon {
 public:
  explicit Polygon(std::vector<Point> points);
  double area() const;
  std::size_t size() const { return points_.size(); }

 private:
  std::vector<Point> points_;
};

Polygon::Polygon(std::vector<Point> points) : points_(std::move(points)) {}

// Shoelace formula.
double Polygon::area() const {
  double sum = 0;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    sum += cross(points_[i], points_[(i + 1) % points_.size()]);
  }
  return sum / 2;
}

}  // namespace geo

template <typename T>
T clamp(T value, T lo, T hi) {
  return value < lo ? lo : (value > hi ? hi : value);
}
