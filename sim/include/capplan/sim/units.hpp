// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <compare>

namespace capplan::units {

// Exponents of the base dimensions: time [s], data [B], work [FLOP], money [USD].
template <int T, int B, int F, int M>
struct Dim {};

// Contract: holds the SI base value (seconds, bytes, FLOPs, US dollars) in a double.
// Mixing dimensions does not compile; construct only through the named helpers below.
template <class D>
class Quantity {
 public:
  constexpr Quantity() = default;
  static constexpr Quantity from_base(double v) { return Quantity(v); }
  constexpr double base() const { return v_; }

  constexpr auto operator<=>(const Quantity&) const = default;
  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity& operator+=(Quantity o) {
    v_ += o.v_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    v_ -= o.v_;
    return *this;
  }
  constexpr Quantity operator*(double k) const { return Quantity(v_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(v_ / k); }
  friend constexpr Quantity operator*(double k, Quantity q) { return Quantity(k * q.v_); }

 private:
  constexpr explicit Quantity(double v) : v_(v) {}
  double v_ = 0.0;
};

template <int T1, int B1, int F1, int M1, int T2, int B2, int F2, int M2>
constexpr auto operator/(Quantity<Dim<T1, B1, F1, M1>> a, Quantity<Dim<T2, B2, F2, M2>> b) {
  if constexpr (T1 == T2 && B1 == B2 && F1 == F2 && M1 == M2) {
    return a.base() / b.base();  // same dimension: a plain ratio
  } else {
    return Quantity<Dim<T1 - T2, B1 - B2, F1 - F2, M1 - M2>>::from_base(a.base() / b.base());
  }
}
template <int T1, int B1, int F1, int M1, int T2, int B2, int F2, int M2>
constexpr auto operator*(Quantity<Dim<T1, B1, F1, M1>> a, Quantity<Dim<T2, B2, F2, M2>> b) {
  return Quantity<Dim<T1 + T2, B1 + B2, F1 + F2, M1 + M2>>::from_base(a.base() * b.base());
}

using Seconds = Quantity<Dim<1, 0, 0, 0>>;
using Bytes = Quantity<Dim<0, 1, 0, 0>>;
using Flops = Quantity<Dim<0, 0, 1, 0>>;
using Usd = Quantity<Dim<0, 0, 0, 1>>;
using BytesPerSecond = Quantity<Dim<-1, 1, 0, 0>>;
using FlopsPerSecond = Quantity<Dim<-1, 0, 1, 0>>;
using UsdPerSecond = Quantity<Dim<-1, 0, 0, 1>>;

// The only places where a raw number meets a unit; decimal vs binary prefixes are explicit.
constexpr Seconds seconds(double n) { return Seconds::from_base(n); }
constexpr Seconds microseconds(double n) { return Seconds::from_base(n * 1e-6); }
constexpr Seconds hours(double n) { return Seconds::from_base(n * 3600.0); }
constexpr Bytes bytes(double n) { return Bytes::from_base(n); }
constexpr Bytes gib(double n) { return Bytes::from_base(n * 1073741824.0); }
constexpr Bytes gb(double n) { return Bytes::from_base(n * 1e9); }
constexpr Flops flops(double n) { return Flops::from_base(n); }
constexpr Usd usd(double n) { return Usd::from_base(n); }
constexpr BytesPerSecond gb_per_s(double n) { return BytesPerSecond::from_base(n * 1e9); }
constexpr BytesPerSecond gbit_per_s(double n) { return BytesPerSecond::from_base(n * 1e9 / 8.0); }
constexpr FlopsPerSecond tflop_per_s(double n) { return FlopsPerSecond::from_base(n * 1e12); }
constexpr UsdPerSecond usd_per_hour(double n) { return UsdPerSecond::from_base(n / 3600.0); }

constexpr double to_hours(Seconds s) { return s.base() / 3600.0; }
constexpr double to_days(Seconds s) { return s.base() / 86400.0; }
constexpr double to_gib(Bytes b) { return b.base() / 1073741824.0; }
constexpr double to_tflop_per_s(FlopsPerSecond f) { return f.base() / 1e12; }
constexpr double to_usd_per_hour(UsdPerSecond p) { return p.base() * 3600.0; }

}  // namespace capplan::units
