module Acme
  module Money
    module Rounding
      def self.half_up(cents)
        (cents + 50) / 100 * 100
      end
    end
  end
end
