module Acme
  module Money
    module Rounding
      class << self
        def half_up(cents)
          (cents + 50) / 100 * 100
        end
      end
    end
  end
end
