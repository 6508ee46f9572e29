require_relative "base_cart"
require "acme/money/money"

module Acme
  module Shop
    class Cart < BaseCart
      include Audits

      def initialize(prices)
        @prices = prices
      end

      def total(items)
        sum = Money::Money.zero
        items.each do |item|
          sum = sum.plus(@prices.price_of(item))
        end
        discount = Money::Discount.new(Money::Rounding.half_up(sum.cents))
        audit(discount.apply(sum))
      end

      def currency
        super
      end
    end
  end
end
